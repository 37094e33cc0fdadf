/*
 * FaultVFS: a pass-through VFS over the default one that can fail chosen
 * writes, syncs and truncates. See include/FaultVFS.h for the API.
 *
 * How it is built:
 *   - Each file opened through it is a FaultFile: our sqlite3_file header,
 *     followed in the same allocation by the real VFS's file (szOsFile is the
 *     sum of both). Every method forwards to that real file.
 *   - The io_methods table we hand out has the same iVersion as the real
 *     file's. That matters: SQLite only uses WAL when iVersion >= 2 (xShm*)
 *     and memory-mapped I/O when iVersion >= 3 (xFetch/xUnfetch), so claiming
 *     more than the real file supports would make SQLite call missing
 *     methods, and claiming less would silently turn WAL or mmap off.
 *   - The VFS-level methods also forward, with the real sqlite3_vfs as their
 *     first argument (the default VFS reads its own pAppData, so it must never
 *     see ours).
 *   - Arming state and counters are C11 atomics, because connections on
 *     several threads do I/O through the same VFS at once.
 */

#include "FaultVFS.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

/* MARK: - Arming state */

/* Kinds being counted; 0 means disarmed. Written last by arm, so an operation
 * that sees a non-zero mask also sees the nth/error/sticky stored before it. */
static atomic_int fault_mask;
static atomic_llong fault_nth;
static atomic_int fault_error;
static atomic_int fault_sticky;
static atomic_llong fault_operations;
static atomic_llong fault_injected;

void serialdb_faults_arm(int kind_mask, long long nth, int error_code, int sticky) {
    atomic_store(&fault_mask, 0);
    atomic_store(&fault_nth, nth);
    atomic_store(&fault_error, error_code);
    atomic_store(&fault_sticky, sticky != 0);
    atomic_store(&fault_operations, 0);
    atomic_store(&fault_injected, 0);
    atomic_store(&fault_mask, kind_mask);
}

void serialdb_faults_disarm(void) {
    atomic_store(&fault_mask, 0);
}

long long serialdb_faults_operations(void) {
    return atomic_load(&fault_operations);
}

long long serialdb_faults_injected(void) {
    return atomic_load(&fault_injected);
}

/* Counts one operation of the given kind if armed for it, and returns the
 * error it must fail with, or SQLITE_OK to let it through. */
static int fault_check(int kind) {
    if ((atomic_load(&fault_mask) & kind) == 0) {
        return SQLITE_OK;
    }
    long long n = atomic_fetch_add(&fault_operations, 1) + 1;
    long long nth = atomic_load(&fault_nth);
    if (nth <= 0) {
        return SQLITE_OK;
    }
    if (n == nth || (n > nth && atomic_load(&fault_sticky))) {
        atomic_fetch_add(&fault_injected, 1);
        return atomic_load(&fault_error);
    }
    return SQLITE_OK;
}

/* MARK: - Files */

typedef struct FaultFile {
    sqlite3_file base;  /* must come first: SQLite sees this */
    sqlite3_file *real; /* the real VFS's file, stored right after us */
} FaultFile;

static sqlite3_file *real_file(sqlite3_file *file) {
    return ((FaultFile *)file)->real;
}

static int fault_close(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xClose(real);
}

static int fault_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xRead(real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    int rc = fault_check(SERIALDB_FAULT_WRITE);
    if (rc != SQLITE_OK) {
        return rc;
    }
    sqlite3_file *real = real_file(file);
    return real->pMethods->xWrite(real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *file, sqlite3_int64 size) {
    int rc = fault_check(SERIALDB_FAULT_TRUNCATE);
    if (rc != SQLITE_OK) {
        return rc;
    }
    sqlite3_file *real = real_file(file);
    return real->pMethods->xTruncate(real, size);
}

static int fault_sync(sqlite3_file *file, int flags) {
    int rc = fault_check(SERIALDB_FAULT_SYNC);
    if (rc != SQLITE_OK) {
        return rc;
    }
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSync(real, flags);
}

static int fault_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileSize(real, size);
}

static int fault_lock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xLock(real, level);
}

static int fault_unlock(sqlite3_file *file, int level) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xUnlock(real, level);
}

static int fault_check_reserved_lock(sqlite3_file *file, int *result) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xCheckReservedLock(real, result);
}

static int fault_file_control(sqlite3_file *file, int op, void *arg) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFileControl(real, op, arg);
}

static int fault_sector_size(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xSectorSize(real);
}

static int fault_device_characteristics(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xDeviceCharacteristics(real);
}

/* Version 2: shared memory, used by WAL mode. */

static int fault_shm_map(sqlite3_file *file, int page, int page_size, int extend, void volatile **out) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmMap(real, page, page_size, extend, out);
}

static int fault_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmLock(real, offset, n, flags);
}

static void fault_shm_barrier(sqlite3_file *file) {
    sqlite3_file *real = real_file(file);
    real->pMethods->xShmBarrier(real);
}

static int fault_shm_unmap(sqlite3_file *file, int delete_flag) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xShmUnmap(real, delete_flag);
}

/* Version 3: memory-mapped reads. */

static int fault_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xFetch(real, offset, amount, out);
}

static int fault_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    sqlite3_file *real = real_file(file);
    return real->pMethods->xUnfetch(real, offset, pointer);
}

/* One table per io_methods version, each listing exactly that version's methods. */

static const sqlite3_io_methods fault_methods_v1 = {
    .iVersion = 1,
    .xClose = fault_close,
    .xRead = fault_read,
    .xWrite = fault_write,
    .xTruncate = fault_truncate,
    .xSync = fault_sync,
    .xFileSize = fault_file_size,
    .xLock = fault_lock,
    .xUnlock = fault_unlock,
    .xCheckReservedLock = fault_check_reserved_lock,
    .xFileControl = fault_file_control,
    .xSectorSize = fault_sector_size,
    .xDeviceCharacteristics = fault_device_characteristics,
};

static const sqlite3_io_methods fault_methods_v2 = {
    .iVersion = 2,
    .xClose = fault_close,
    .xRead = fault_read,
    .xWrite = fault_write,
    .xTruncate = fault_truncate,
    .xSync = fault_sync,
    .xFileSize = fault_file_size,
    .xLock = fault_lock,
    .xUnlock = fault_unlock,
    .xCheckReservedLock = fault_check_reserved_lock,
    .xFileControl = fault_file_control,
    .xSectorSize = fault_sector_size,
    .xDeviceCharacteristics = fault_device_characteristics,
    .xShmMap = fault_shm_map,
    .xShmLock = fault_shm_lock,
    .xShmBarrier = fault_shm_barrier,
    .xShmUnmap = fault_shm_unmap,
};

static const sqlite3_io_methods fault_methods_v3 = {
    .iVersion = 3,
    .xClose = fault_close,
    .xRead = fault_read,
    .xWrite = fault_write,
    .xTruncate = fault_truncate,
    .xSync = fault_sync,
    .xFileSize = fault_file_size,
    .xLock = fault_lock,
    .xUnlock = fault_unlock,
    .xCheckReservedLock = fault_check_reserved_lock,
    .xFileControl = fault_file_control,
    .xSectorSize = fault_sector_size,
    .xDeviceCharacteristics = fault_device_characteristics,
    .xShmMap = fault_shm_map,
    .xShmLock = fault_shm_lock,
    .xShmBarrier = fault_shm_barrier,
    .xShmUnmap = fault_shm_unmap,
    .xFetch = fault_fetch,
    .xUnfetch = fault_unfetch,
};

/* The table matching the real file's version. Versions above 3 get the
 * version 3 table: we do not know the later methods, so we do not claim them. */
static const sqlite3_io_methods *fault_methods_for(const sqlite3_io_methods *real) {
    if (real->iVersion >= 3) {
        return &fault_methods_v3;
    }
    if (real->iVersion == 2) {
        return &fault_methods_v2;
    }
    return &fault_methods_v1;
}

/* MARK: - The VFS */

static sqlite3_vfs *real_vfs(sqlite3_vfs *vfs) {
    return (sqlite3_vfs *)vfs->pAppData;
}

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    FaultFile *fault = (FaultFile *)file;
    fault->real = (sqlite3_file *)(fault + 1);
    fault->real->pMethods = NULL;
    sqlite3_vfs *real = real_vfs(vfs);
    int rc = real->xOpen(real, name, fault->real, flags, out_flags);
    /* SQLite calls xClose whenever pMethods is set, even after a failed open,
     * and never when it is NULL: mirror the real file so the two agree. */
    file->pMethods = fault->real->pMethods != NULL ? fault_methods_for(fault->real->pMethods) : NULL;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xDelete(real, name, sync_dir);
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xAccess(real, name, flags, result);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xFullPathname(real, name, size, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *filename) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xDlOpen(real, filename);
}

static void fault_dl_error(sqlite3_vfs *vfs, int size, char *message) {
    sqlite3_vfs *real = real_vfs(vfs);
    real->xDlError(real, size, message);
}

typedef void (*fault_dl_symbol)(void);

static fault_dl_symbol fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xDlSym(real, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    sqlite3_vfs *real = real_vfs(vfs);
    real->xDlClose(real, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xRandomness(real, size, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xSleep(real, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *out) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xCurrentTime(real, out);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xGetLastError(real, size, out);
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xCurrentTimeInt64(real, out);
}

static int fault_set_system_call(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xSetSystemCall(real, name, call);
}

static sqlite3_syscall_ptr fault_get_system_call(sqlite3_vfs *vfs, const char *name) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xGetSystemCall(real, name);
}

static const char *fault_next_system_call(sqlite3_vfs *vfs, const char *name) {
    sqlite3_vfs *real = real_vfs(vfs);
    return real->xNextSystemCall(real, name);
}

/* MARK: - Registration */

static sqlite3_vfs fault_vfs;
static int fault_register_rc = SQLITE_ERROR;
static pthread_once_t fault_register_once = PTHREAD_ONCE_INIT;

/* Builds fault_vfs over the default VFS, with the same version. Optional
 * methods the real VFS lacks (NULL, or beyond its version) stay NULL here. */
static void fault_register(void) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (real == NULL) {
        fault_register_rc = SQLITE_ERROR;
        return;
    }
    fault_vfs.iVersion = real->iVersion < 3 ? real->iVersion : 3;
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + real->szOsFile;
    fault_vfs.mxPathname = real->mxPathname;
    fault_vfs.zName = SERIALDB_FAULT_VFS_NAME;
    fault_vfs.pAppData = real;
    fault_vfs.xOpen = fault_open;
    fault_vfs.xDelete = fault_delete;
    fault_vfs.xAccess = fault_access;
    fault_vfs.xFullPathname = fault_full_pathname;
    fault_vfs.xDlOpen = real->xDlOpen != NULL ? fault_dl_open : NULL;
    fault_vfs.xDlError = real->xDlError != NULL ? fault_dl_error : NULL;
    fault_vfs.xDlSym = real->xDlSym != NULL ? fault_dl_sym : NULL;
    fault_vfs.xDlClose = real->xDlClose != NULL ? fault_dl_close : NULL;
    fault_vfs.xRandomness = fault_randomness;
    fault_vfs.xSleep = fault_sleep;
    fault_vfs.xCurrentTime = fault_current_time;
    fault_vfs.xGetLastError = real->xGetLastError != NULL ? fault_get_last_error : NULL;
    if (real->iVersion >= 2 && real->xCurrentTimeInt64 != NULL) {
        fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
    }
    if (real->iVersion >= 3) {
        fault_vfs.xSetSystemCall = real->xSetSystemCall != NULL ? fault_set_system_call : NULL;
        fault_vfs.xGetSystemCall = real->xGetSystemCall != NULL ? fault_get_system_call : NULL;
        fault_vfs.xNextSystemCall = real->xNextSystemCall != NULL ? fault_next_system_call : NULL;
    }
    fault_register_rc = sqlite3_vfs_register(&fault_vfs, 0);
}

int serialdb_faults_register(void) {
    /* pthread_once makes concurrent first calls wait for the one doing the
     * work, and publishes fault_vfs and fault_register_rc to all of them. */
    if (pthread_once(&fault_register_once, fault_register) != 0) {
        return SQLITE_ERROR;
    }
    return fault_register_rc;
}

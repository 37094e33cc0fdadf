#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a harness's `posix_spawn` needs so that a child inherits only its standard input,
/// output and error, however many descriptors the parent holds (the test process holds
/// thousands: servers, their connections, pipes to other children). A PostgreSQL server that
/// `pg_ctl` starts would otherwise keep every one of them open for its whole life.
public enum SpawnActions {
    #if canImport(Darwin)
        /// The attribute flags that close every descriptor not named by a file action.
        public static let closingFlags = Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #else
        /// The attribute flags that close every descriptor not named by a file action (none on
        /// Linux: ``closeDescriptorsAboveStandardError(_:)`` adds a file action instead).
        public static let closingFlags: Int32 = 0

        /// Adds the action that closes every descriptor above standard error in the child.
        ///
        /// - Returns: `nil`, or why it cannot (then the caller must not spawn).
        public static func closeDescriptorsAboveStandardError(
            _ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>
        ) -> String? {
            guard let closeFrom else { return "this C library has no posix_spawn_file_actions_addclosefrom_np" }
            let code = closeFrom(actions, 3)
            return code == 0 ? nil : "closing its descriptors fails: " + String(cString: strerror(code))
        }

        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run
        /// time: Swift's Glibc module is built without `_GNU_SOURCE`, which declares it.
        private static let closeFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard
                    let symbol = dlsym(
                        UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
                else { return nil }
                return unsafeBitCast(
                    symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self
                )
            }()
    #endif
}

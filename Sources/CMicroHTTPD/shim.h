// libmicrohttpd for Swift: MHD_start_daemon is variadic, which Swift cannot call, so the start
// lives here in a few lines of C, together with the other calls that are awkward from Swift
// (reading a union, building a response).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Starts a daemon with its own thread pool polling with epoll, bound to `host` (an IPv4 or IPv6
/// address literal) and `port` (0: a free port), with at most `connectionLimit` connections,
/// `perAddressLimit` of them from one client address. `notify` is told of every connection
/// opened and closed. Returns NULL when the address is not a literal or the daemon cannot start
/// (port taken, no permission...).
static inline struct MHD_Daemon *serialdb_mhd_start(
    const char *host, uint16_t port, unsigned int threads, unsigned int timeoutSeconds,
    unsigned int connectionLimit, unsigned int perAddressLimit, MHD_AccessHandlerCallback handler,
    void *handlerContext, MHD_RequestCompletedCallback completed, void *completedContext,
    MHD_NotifyConnectionCallback notify, void *notifyContext)
{
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    const struct sockaddr *address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, host, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        address = (const struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, host, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        address = (const struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        return NULL;
    }
    return MHD_start_daemon(
        flags, port, NULL, NULL, handler, handlerContext,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_TIMEOUT, timeoutSeconds,
        MHD_OPTION_CONNECTION_LIMIT, connectionLimit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, perAddressLimit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completedContext,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notifyContext,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_END);
}

/// The port the daemon listens on (the one the system picked when it was started on port 0),
/// or 0 when it cannot be read.
static inline uint16_t serialdb_mhd_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The socket of a connection, or -1 when it cannot be read.
static inline int serialdb_mhd_connection_socket(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// Whether a connection notification tells of a new connection (rather than a closed one).
static inline int serialdb_mhd_connection_started(enum MHD_ConnectionNotificationCode code)
{
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// Queues a response with a copy of `body` and the given content type, and `Connection: close`
/// when `closeConnection` is non-zero (a server that is stopping). Returns MHD_NO when the
/// response could not be made or queued (MHD then closes the connection).
static inline enum MHD_Result serialdb_mhd_respond(
    struct MHD_Connection *connection, unsigned int status, const void *body, size_t length,
    const char *contentType, int closeConnection)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return MHD_NO;
    if (MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, contentType) != MHD_YES
        || (closeConnection
            && MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)) {
        MHD_destroy_response(response);
        return MHD_NO;
    }
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

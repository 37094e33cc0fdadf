#if canImport(Glibc)
    import Foundation
    import Glibc

    /// One TCP connection to a test server driven byte by byte, as a hostile or broken client
    /// would: partial requests, stalls, a chosen source address. Every read is bounded.
    final class RawConnection {
        private let socket: Int32
        /// Bytes received and not yet returned by ``answer(within:)``.
        private var pending: [UInt8] = []

        /// Connects to 127.0.0.1:`port` from `source` (any address of 127.0.0.0/8; `nil`: the
        /// system's choice).
        init(port: UInt16, from source: String? = nil) throws {
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard socket >= 0 else { throw Failure("socket() failed: errno \(errno)") }
            if let source {
                guard Self.use(socket, source, port: 0, { bind($0, $1, $2) }) else {
                    close(socket)
                    throw Failure("cannot bind to \(source): errno \(errno)")
                }
            }
            guard Self.use(socket, "127.0.0.1", port: port, { connect($0, $1, $2) }) else {
                close(socket)
                throw Failure("cannot connect to port \(port): errno \(errno)")
            }
        }

        deinit {
            close(socket)
        }

        /// Sends bytes; `false` when the server has closed the connection.
        @discardableResult
        func send(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
        }

        /// Sends the UTF-8 bytes of `text`.
        @discardableResult
        func send(_ text: String) -> Bool {
            send(Array(text.utf8))
        }

        /// Stops sending: the server reads the end of the request.
        func finishSending() {
            shutdown(socket, Int32(SHUT_WR))
        }

        /// The next answer that arrives within `seconds`: until the server closes the connection
        /// or a whole answer (headers and the body its Content-Length announces) is in; bytes of
        /// the answers after it are kept for the next call. `nil` when nothing came in time,
        /// empty when the server closed without a word.
        func answer(within seconds: Int = 30) -> String? {
            let deadline = Date().addingTimeInterval(Double(seconds))
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                if let length = Self.firstAnswerLength(pending) {
                    defer { pending.removeFirst(length) }
                    return String(decoding: pending.prefix(length), as: UTF8.self)
                }
                guard Date() < deadline else { break }
                var timeout = timeval(tv_sec: 1, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                let count = recv(socket, &buffer, buffer.count, 0)
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    defer { pending.removeAll() }
                    return String(decoding: pending, as: UTF8.self)
                }
                if count > 0 { pending += buffer[0..<count] }
            }
            return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
        }

        /// Whether the server has closed the connection (a read sees its end, or an error),
        /// waiting at most `milliseconds` for a sign.
        func isClosedByServer(waitingMilliseconds milliseconds: Int = 1000) -> Bool {
            var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: Int(milliseconds % 1000) * 1000)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            let count = recv(socket, &byte, 1, 0)
            return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        }

        /// The length of the first whole answer in `bytes`, if one is there.
        private static func firstAnswerLength(_ bytes: [UInt8]) -> Int? {
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            guard bytes.count >= separator.count,
                let end = (0...(bytes.count - separator.count)).first(where: {
                    bytes[$0..<$0 + separator.count].elementsEqual(separator)
                })
            else { return nil }
            let headers = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
            let length =
                headers.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }).flatMap {
                    Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
                } ?? 0
            let total = end + separator.count + length
            return bytes.count >= total ? total : nil
        }

        /// Calls `operation` (bind or connect) with the IPv4 address `host`:`port`; whether it succeeded.
        private static func use(
            _ socket: Int32, _ host: String, port: UInt16,
            _ operation: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
        ) -> Bool {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr(host)
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    operation(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
        }

        struct Failure: Error, CustomStringConvertible {
            let description: String

            init(_ description: String) {
                self.description = description
            }
        }
    }
#endif

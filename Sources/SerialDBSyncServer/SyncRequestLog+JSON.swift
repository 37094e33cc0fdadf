import Foundation
import SerialDBSyncWire

extension SyncRequestLog {
    /// The entry as one line of JSON (no newline), for `--log-format json`:
    /// `{"time":"2026-12-01T12:00:00.123Z","call":"post-data","account":"alice","status":200,`
    /// `"duration":0.0032,"rows":3,"method":"POST","path":"/v1/post-data"}`, with `"error"` for
    /// a 500. `account` is `null` without a valid token; `duration` is in seconds; `rows` counts
    /// the changes served or mutations answered. Like ``description``, it holds no token and no
    /// row value; JSON's escaping keeps any byte a client sent inside its string.
    public var json: String {
        var writer = JSONWriter(capacity: 192)
        writer.raw("{\"time\":")
        writer.string(Self.timeFormat.format(time))
        writer.raw(",\"call\":")
        writer.string(call.rawValue)
        writer.raw(",\"account\":")
        if let account { writer.string(account) } else { writer.raw("null") }
        writer.raw(",\"status\":")
        writer.integer(Int64(status))
        writer.raw(",\"duration\":")
        writer.number(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        writer.raw(",\"rows\":")
        writer.integer(Int64(rows))
        writer.raw(",\"method\":")
        writer.string(method)
        writer.raw(",\"path\":")
        writer.string(path)
        if let internalError {
            writer.raw(",\"error\":")
            writer.string(internalError)
        }
        writer.raw("}")
        return writer.string
    }

    /// A line of JSON for what the server says outside requests (starting, stopping):
    /// `{"time":"...","message":"..."}`.
    public static func jsonMessage(_ message: String, time: Date = Date()) -> String {
        var writer = JSONWriter(capacity: 64 + message.utf8.count)
        writer.raw("{\"time\":")
        writer.string(timeFormat.format(time))
        writer.raw(",\"message\":")
        writer.string(message)
        writer.raw("}")
        return writer.string
    }

    /// UTC, with milliseconds: `2026-12-01T12:00:00.123Z`.
    private static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
}

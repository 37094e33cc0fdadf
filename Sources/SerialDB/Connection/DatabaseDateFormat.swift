import Foundation

/// Formats and parses SQLite's date text `YYYY-MM-DD HH:MM:SS.SSS` in UTC, without
/// DateFormatter (slow, locale-dependent) and without C time functions (not portable).
enum DatabaseDateFormat {
    private static let secondsPerDay: Int64 = 86_400

    /// The text of a date given as whole milliseconds since 1970 (the caller converts, because
    /// not every `Date` has a 64-bit count).
    static func format(millisecondsSince1970 totalMilliseconds: Int64) -> String {
        let milliseconds = totalMilliseconds.modulo(1000)
        let totalSeconds = (totalMilliseconds - milliseconds) / 1000
        let secondOfDay = totalSeconds.modulo(secondsPerDay)
        let days = (totalSeconds - secondOfDay) / secondsPerDay
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " " + pad(secondOfDay / 3600, 2) + ":"
            + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2) + "." + pad(milliseconds, 3)
    }

    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[start..<start + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = number(0, 4), bytes.count >= 10, bytes[4] == 45, bytes[7] == 45,
            let month = number(5, 2), let day = number(8, 2), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var seconds = daysSinceEpoch(year: year, month: month, day: day) * secondsPerDay
        var fraction = 0.0
        if bytes.count > 10 {
            guard bytes[10] == 32 || bytes[10] == 84, let hour = number(11, 2), bytes.count >= 16, bytes[13] == 58,
                let minute = number(14, 2)
            else { return nil }
            seconds += hour * 3600 + minute * 60
            var position = 16
            if position < bytes.count, bytes[position] == 58 {
                guard let second = number(17, 2) else { return nil }
                seconds += second
                position = 19
                if position < bytes.count, bytes[position] == 46 {
                    var scale = 0.1
                    position += 1
                    while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                        fraction += Double(bytes[position] - 48) * scale
                        scale /= 10
                        position += 1
                    }
                }
            }
            if position < bytes.count, bytes[position] == 90 { position += 1 }
            guard position == bytes.count else { return nil }
        }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // Howard Hinnant's days-from-civil and civil-from-days algorithms (proleptic Gregorian).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilDate(daysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// The remainder with the sign of the divisor, so dates before 1970 format correctly.
    fileprivate func modulo(_ divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}

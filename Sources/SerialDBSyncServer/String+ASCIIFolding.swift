extension String {
    /// The string with `A`–`Z` turned into `a`–`z` and every other character kept: how SQLite
    /// compares identifiers and what its NOCASE collation folds. `lowercased()` would not do:
    /// it folds all of Unicode, so the Kelvin sign would match `k`, which SQLite never does.
    var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return self }
        return String(
            decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

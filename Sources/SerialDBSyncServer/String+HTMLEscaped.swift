extension String {
    /// The text with `&`, `<`, `>`, `"` and `'` written as character references: safe inside
    /// an HTML element or a quoted attribute, whatever a table name or a message holds.
    var htmlEscaped: String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in unicodeScalars {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

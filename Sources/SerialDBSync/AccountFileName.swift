import Foundation

/// The encoding behind ``AccountDatabases/fileName(forAccount:)``, for every `Writer`.
enum AccountFileName {
    static func make(forAccount account: String) throws -> String {
        guard !account.isEmpty else {
            throw SyncError(.invalidAccount, "An account id cannot be empty; pass the signed-in user's id.")
        }
        let hexDigits = Array("0123456789ABCDEF")
        var encoded = ""
        var cut = 0
        for byte in account.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "_"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0xf)])
            }
            if encoded.count <= 60 { cut = encoded.count }
        }
        if encoded.count > 120 {
            // Cut at a whole byte's encoding; the digest tells long ids apart.
            encoded = String(encoded.prefix(cut)) + "~" + SHA256.hex(Array(account.utf8))
        }
        return encoded + ".sqlite"
    }
}

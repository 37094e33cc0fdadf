import Foundation

/// Decodes a `Decodable` value from one row: each coding key reads the column of the same
/// name. Properties of ``DatabaseValueConvertible`` types read the column directly; other
/// nested `Decodable` values are read as JSON from a TEXT or BLOB column.
///
/// A class, so that one decoder serves a whole fetch (its row reads the statement's current
/// row) and the containers that copy it around hold a single reference: as a struct it was
/// boxed into an `any Decoder` and copied field by field for every row and property.
@usableFromInline
final class RowDecoder: Decoder {
    let row: Row
    /// The row's column names, fetched once instead of once per property.
    let lookup: ColumnLookup
    /// The statement's handle when the row reads from one (see ``Row/statementHandle``).
    private let statementHandle: OpaquePointer?
    /// The column the next key is expected at. A synthesized `init(from:)` asks for its keys
    /// in declaration order, row after row, so after the first row each key is found with one
    /// comparison instead of a search; reset by each row's ``container(keyedBy:)``.
    private var predictedIndex = 0
    // Witnesses of a @usableFromInline type's conformance must be @usableFromInline too.
    @usableFromInline let codingPath: [any CodingKey]
    @usableFromInline var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// A decoder for `row`, which must be on a row already (its column names are read now).
    @usableFromInline
    init(row: Row, codingPath: [any CodingKey] = []) {
        self.row = row
        self.lookup = row.lookup
        self.statementHandle = row.statementHandle
        self.codingPath = codingPath
    }

    /// The index of the named column: the predicted one when it is the column that
    /// ``ColumnLookup/index(of:)`` would find (see ``ColumnLookup/isLeftmost(_:at:)``),
    /// otherwise a search. The next prediction is the column after it, or the column itself
    /// when the caller only peeks (`decodeNil` before a `decode` of the same key).
    func columnIndex(_ name: String, advancing: Bool = true) -> Int? {
        let guess = predictedIndex
        let index: Int
        if lookup.isLeftmost(name, at: guess) {
            index = guess
        } else if let found = lookup.index(of: name) {
            index = found
        } else {
            return nil
        }
        predictedIndex = advancing ? index &+ 1 : index
        return index
    }

    /// The value of the named column. (Taking a String, not the generic key, lets the compiler
    /// specialize it for each value type although the key type is only known at run time.)
    func decode<T: DatabaseValueConvertible>(_ type: T.Type, column: String) throws -> T {
        guard let index = columnIndex(column) else { throw row.missingColumnError(column) }
        return try value(type, at: index)
    }

    /// The value at `index`, which comes from ``columnIndex(_:advancing:)``.
    func value<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        // The index comes from the statement's current names, so it is in range: read the
        // column straight away, without asking SQLite for the column count again. NULL, a value
        // of another kind, and copied rows take the checked path, which also explains failures.
        if let statementHandle, let value = T.fromStatement(statementHandle, column: Int32(truncatingIfNeeded: index)) {
            return value
        }
        return try row.decode(type, at: index)
    }

    @usableFromInline
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        predictedIndex = 0
        return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self))
    }

    @usableFromInline
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(codingPath: codingPath, debugDescription: "A row decodes as a keyed container"))
    }

    @usableFromInline
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleColumnContainer(decoder: self)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: RowDecoder

        var row: Row { decoder.row }
        var codingPath: [any CodingKey] { decoder.codingPath }

        var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            decoder.lookup.index(of: key.stringValue) != nil
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let index = decoder.columnIndex(key.stringValue, advancing: false) else { return true }
            return row.isNull(at: index)
        }

        // Optional properties: one look-up, where the default implementations of
        // `decodeIfPresent` call `contains`, `decodeNil` and `decode`, each looking the key up.
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try decodeIfPresentValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try decodeIfPresentValue(type, forKey: key)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let index = decoder.columnIndex(key.stringValue), !row.isNull(at: index) else { return nil }
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try decodeConvertible(convertible, at: index) as? T
            }
            return try decodeJSON(type, column: key.stringValue)
        }

        /// `nil` for a missing column or NULL, otherwise the value, for the library's own types.
        private func decodeIfPresentValue<V: DatabaseValueConvertible>(_ type: V.Type, forKey key: Key) throws -> V? {
            guard let index = decoder.columnIndex(key.stringValue), !row.isNull(at: index) else { return nil }
            return try decoder.value(type, at: index)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try decoder.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try decoder.decode(type, column: key.stringValue)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try decodeConvertible(convertible, forKey: key) as! T
            }
            return try decodeJSON(type, column: key.stringValue)
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type, forKey key: Key) throws -> V {
            try decoder.decode(type, column: key.stringValue)
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type, at index: Int) throws -> V {
            try decoder.value(type, at: index)
        }

        private func decodeJSON<T: Decodable>(_ type: T.Type, column: String) throws -> T {
            let data: Data = try row.decode(column: column)
            do {
                return try JSONDecoder().decode(type, from: data)
            } catch {
                throw SerialDBError(
                    .decodingFailed, "Column `\(column)` does not hold JSON for \(T.self).", underlying: error)
            }
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw unsupported(key)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw unsupported(key)
        }

        func superDecoder() throws -> any Decoder {
            RowDecoder(row: row, codingPath: codingPath)
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            RowDecoder(row: row, codingPath: codingPath + [key])
        }

        private func unsupported(_ key: Key) -> SerialDBError {
            SerialDBError(
                .decodingFailed,
                "`\(key.stringValue)` asks for a nested container; store nested values as JSON in one column.")
        }
    }

    /// A single-value container reads the first column.
    struct SingleColumnContainer: SingleValueDecodingContainer {
        let decoder: RowDecoder

        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { decoder.row.isNull(at: 0) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard let convertible = T.self as? any DatabaseValueConvertible.Type else {
                throw SerialDBError(.decodingFailed, "\(T.self) cannot be read from a single column.")
            }
            return try decodeConvertible(convertible) as! T
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type) throws -> V {
            try decoder.row.decode(type, at: 0)
        }
    }
}

import Foundation

/// Decodes a `Decodable` value from one row: each coding key reads the column of the same
/// name. Properties of ``DatabaseValueConvertible`` types read the column directly; other
/// nested `Decodable` values are read as JSON from a TEXT or BLOB column.
///
/// A class, so that one decoder serves a whole fetch (its row reads the statement's current
/// row): as a struct it was boxed into an `any Decoder` and copied field by field for every row
/// and property. Its containers hold the ``ColumnCursor``, a single reference.
@usableFromInline
final class RowDecoder: Decoder {
    /// The row, its column names, and the column the next key is expected at.
    let columns: ColumnCursor
    /// The keyed container handed out for the previous row, given again for the next rows:
    /// building one costs an allocation and the run-time look-up of two generic types (the key
    /// type is only known at run time), which cost as much as reading the row's values. It
    /// holds the cursor, not the decoder, so keeping it here makes no reference cycle.
    private var reusable: AnyObject?
    /// The key type of `reusable`: comparing it is what makes the unchecked cast safe.
    private var reusableKeyType: ObjectIdentifier?
    // Witnesses of a @usableFromInline type's conformance must be @usableFromInline too.
    @usableFromInline var codingPath: [any CodingKey] { columns.codingPath }
    @usableFromInline var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// A decoder for `row`, which must be on a row already (its column names are read now).
    @usableFromInline
    init(row: Row, codingPath: [any CodingKey] = []) {
        columns = ColumnCursor(row: row, codingPath: codingPath)
    }

    @usableFromInline
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        columns.startRow()
        if reusableKeyType == ObjectIdentifier(type), let reusable {
            // A cast without a run-time check: `reusable` was made for this very key type. A
            // checked cast (`as?`) looked up the container's generic types again.
            return unsafeDowncast(reusable, to: ReusableContainer<KeyedDecodingContainer<Key>>.self).value()
        }
        return makeContainer(keyedBy: type)
    }

    /// The first row's container, kept for the next ones. Not inlined into
    /// ``container(keyedBy:)``: there it made every call look up the container's type.
    @inline(never)
    private func makeContainer<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        let container = KeyedDecodingContainer(KeyedContainer<Key>(columns: columns))
        reusable = ReusableContainer(container)
        reusableKeyType = ObjectIdentifier(type)
        return container
    }

    /// A keyed container kept for the next rows.
    private final class ReusableContainer<Container> {
        private let container: Container

        init(_ container: Container) {
            self.container = container
        }

        /// The container. Not inlined: inside the method the container's type comes with the
        /// object, where the caller would look up `KeyedDecodingContainer<Key>` at run time.
        @inline(never)
        func value() -> Container {
            container
        }
    }

    @usableFromInline
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            DecodingError.Context(codingPath: codingPath, debugDescription: "A row decodes as a keyed container"))
    }

    @usableFromInline
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleColumnContainer(columns: columns)
    }

    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let columns: ColumnCursor

        var row: Row { columns.row }
        var codingPath: [any CodingKey] { columns.codingPath }

        var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool {
            columns.lookup.index(of: key.stringValue) != nil
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            guard let index = columns.columnIndex(key.stringValue, advancing: false) else { return true }
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
            guard let index = columns.columnIndex(key.stringValue), !row.isNull(at: index) else { return nil }
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try decodeConvertible(convertible, at: index) as? T
            }
            return try decodeJSON(type, column: key.stringValue)
        }

        /// `nil` for a missing column or NULL, otherwise the value, for the library's own types.
        private func decodeIfPresentValue<V: DatabaseValueConvertible>(_ type: V.Type, forKey key: Key) throws -> V? {
            guard let index = columns.columnIndex(key.stringValue), !row.isNull(at: index) else { return nil }
            return try columns.value(type, at: index)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try columns.decode(type, column: key.stringValue)
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try columns.decode(type, column: key.stringValue)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if let convertible = T.self as? any DatabaseValueConvertible.Type {
                return try decodeConvertible(convertible, forKey: key) as! T
            }
            return try decodeJSON(type, column: key.stringValue)
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type, forKey key: Key) throws -> V {
            try columns.decode(type, column: key.stringValue)
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type, at index: Int) throws -> V {
            try columns.value(type, at: index)
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
        let columns: ColumnCursor

        var codingPath: [any CodingKey] { columns.codingPath }

        func decodeNil() -> Bool { columns.row.isNull(at: 0) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard let convertible = T.self as? any DatabaseValueConvertible.Type else {
                throw SerialDBError(.decodingFailed, "\(T.self) cannot be read from a single column.")
            }
            return try decodeConvertible(convertible) as! T
        }

        private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type) throws -> V {
            try columns.row.decode(type, at: 0)
        }
    }
}

import SerialDB
import SerialDBSyncWire

extension JSONWriter {
    /// A stored value in the wire encoding (`JSONWriter.value(_:)`): the server keeps rows
    /// as the core's values, the protocol knows only its own.
    mutating func value(_ value: DatabaseValue) {
        switch value {
        case .null: self.value(SyncValue.null)
        case .integer(let integer): self.value(SyncValue.integer(integer))
        case .real(let double): self.value(SyncValue.real(double))
        case .text(let text): self.value(SyncValue.text(text))
        case .blob(let data): self.value(SyncValue.blob(data))
        }
    }
}

import CSQLite
import TaskCrypto

/// A value bound to, or read from, a statement.
enum SQLValue: Equatable {
  case null
  case integer(Int64)
  case text(String)
  /// Text given as its UTF-8 bytes (bound as they are, never validated or
  /// copied into a String first: for large texts the caller made as bytes).
  case utf8([UInt8])
  case blob([UInt8])
}

/// A prepared SQLite statement. Parameters are bound by position, never
/// spliced into the SQL text; the statement is finalised in `deinit`.
final class Statement {
  private unowned let connection: Connection
  private let handle: OpaquePointer

  // SQLITE_TRANSIENT is a C macro Swift cannot import: SQLite copies the bytes.
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  init(connection: Connection, handle database: OpaquePointer, sql: String) throws {
    self.connection = connection
    var prepared: OpaquePointer?
    let code = sqlite3_prepare_v2(database, sql, -1, &prepared, nil)
    guard code == SQLITE_OK, let prepared else { throw connection.error(code) }
    handle = prepared
  }

  deinit {
    sqlite3_finalize(handle)
  }

  /// Resets the statement and clears its bindings for the next use.
  func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }

  /// Binds `values` to parameters 1, 2, … in order.
  ///
  /// - Throws: `TaskerError.database`.
  @discardableResult
  func bind(_ values: [SQLValue]) throws -> Statement {
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let code: Int32
      switch value {
      case .null: code = sqlite3_bind_null(handle, index)
      case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
      case .text(var text):
        // The string's own UTF-8, no C copy of it; the explicit length keeps any embedded NUL bytes.
        // An empty one is bound from a literal: a nil pointer would bind NULL, not ''.
        code = text.withUTF8 { utf8 in
          guard let start = utf8.baseAddress, !utf8.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, Self.transient)
          }
          return sqlite3_bind_text(
            handle, index, UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self), Int32(utf8.count),
            Self.transient)
        }
      case .utf8(let bytes):
        code = bytes.withUnsafeBytes { raw in
          guard let start = raw.baseAddress, !raw.isEmpty else {
            return sqlite3_bind_text(handle, index, "", 0, Self.transient)
          }
          return sqlite3_bind_text(
            handle, index, start.assumingMemoryBound(to: CChar.self), Int32(raw.count), Self.transient)
        }
      case .blob(let bytes):
        code = bytes.withUnsafeBytes {
          sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient)
        }
      }
      try connection.check(code)
    }
    return self
  }

  /// Steps once.
  ///
  /// - Returns: true when a row is ready to read, false when done.
  /// - Throws: `TaskerError.database` (including constraint failures).
  func step() throws -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw connection.error(code)
    }
  }

  /// Binds `values` and steps to the end, for statements that return no rows.
  ///
  /// - Throws: `TaskerError.database`.
  func run(_ values: [SQLValue] = []) throws {
    try bind(values)
    defer { sqlite3_reset(handle) }
    while try step() {}
  }

  /// Binds `values` and maps every row through `row`.
  ///
  /// - Throws: `TaskerError.database`, or what `row` throws.
  func rows<Row>(_ values: [SQLValue], _ row: (Statement) throws -> Row) throws -> [Row] {
    try bind(values)
    defer { sqlite3_reset(handle) }
    var result = [Row]()
    while try step() { result.append(try row(self)) }
    return result
  }

  /// Binds `values` and hands the rows to `row` one at a time, until it
  /// returns false or the rows end; then resets the statement. Only the
  /// row being read is in memory (what `row` keeps is its own affair), so
  /// this is how the store reads a table of any size.
  ///
  /// - Throws: `TaskerError.database`, or what `row` throws.
  func each(_ values: [SQLValue] = [], _ row: (Statement) throws -> Bool) throws {
    try bind(values)
    defer { sqlite3_reset(handle) }
    while try step() {
      guard try row(self) else { return }
    }
  }

  /// Maps every row of a statement without parameters through `row`.
  ///
  /// - Throws: `TaskerError.database`, or what `row` throws.
  func rows<Row>(_ row: (Statement) throws -> Row) throws -> [Row] {
    try rows([], row)
  }

  /// The first row mapped through `row`, or nil when there is none.
  ///
  /// - Throws: `TaskerError.database`, or what `row` throws.
  func first<Row>(_ values: [SQLValue] = [], _ row: (Statement) throws -> Row) throws -> Row? {
    try bind(values)
    defer { sqlite3_reset(handle) }
    return try step() ? try row(self) : nil
  }

  /// Column `index` (from 0) as an integer; 0 for NULL.
  func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

  /// Column `index` as an integer, or nil for NULL.
  func optionalInteger(_ index: Int32) -> Int64? {
    sqlite3_column_type(handle, index) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, index)
  }

  /// Column `index` as bytes; empty for NULL.
  func blob(_ index: Int32) -> [UInt8] {
    guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
    return Array(UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
  }

  /// Column `index` as text, its UTF-8 bytes as stored (no String made
  /// on the way); empty for NULL.
  func utf8(_ index: Int32) -> [UInt8] {
    guard let bytes = sqlite3_column_text(handle, index) else { return [] }
    return Array(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(handle, index))))
  }

  /// Column `index` as text; "" for NULL.
  func text(_ index: Int32) -> String {
    optionalText(index) ?? ""
  }

  /// Column `index` as text, or nil for NULL.
  func optionalText(_ index: Int32) -> String? {
    guard let bytes = sqlite3_column_text(handle, index) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, index))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  /// Column `index` as a receipt chain: the 32 bytes of a TEXT value of
  /// exactly 64 lowercase hex digits, else nil (NULL, a BLOB, a number,
  /// any other text).
  func optionalChain(_ index: Int32) -> [UInt8]? {
    guard sqlite3_column_type(handle, index) == SQLITE_TEXT, let text = optionalText(index) else { return nil }
    return SHA256Digest(hex: text)?.bytes
  }
}

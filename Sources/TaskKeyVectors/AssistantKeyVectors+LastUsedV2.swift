import AssistantKeys
import FoundationEssentials
import TaskCrypto

extension AssistantKeyVectors {
  /// `assistant-last-used`, version 2 (`Vectors/assistant-last-used-v2.json`):
  /// files in hex, each case with the full read's outcome (`list`) and the
  /// outcome of verify's search for one id.
  struct LastUsedFileV2: Codable, Equatable {
    static let version = 2

    struct Test: Codable, Equatable {
      var id: Int
      var comment: String
      /// The last-used file, hex.
      var file: String
      /// The full read: `valid` (read as `lastUsed`) or `invalid` (refused
      /// with `damage`; every key then shows as never used).
      var result: String
      /// Valid: the keys used, public id to Unix seconds.
      var lastUsed: [String: Int64]?
      /// Invalid: `authentication_failed`, `malformed`, `unsupported_version`.
      var damage: String?
      /// The public id verify searches for, when the case has a search.
      var searchID: String?
      /// `used` (at `searchTime`), `never`, `absent` (no slot) or `refused`
      /// (the header is refused: nothing is read or written).
      var search: String?
      var searchTime: Int64?

      enum CodingKeys: String, CodingKey {
        case id, comment, file, result, damage, search
        case lastUsed = "last_used"
        case searchID = "search_id"
        case searchTime = "search_time"
      }
    }

    var format: String
    var version: Int
    var description: String
    var integrityKey: String
    var tests: [Test]

    enum CodingKeys: String, CodingKey {
      case format, version, description, tests
      case integrityKey = "integrity_key"
    }
  }

  /// The full read of a last-used file of either version: (`result`,
  /// `damage`, the table).
  static func lastUsedOutcome(_ bytes: [UInt8], integrityKey: SymmetricKey) -> (String, String?, [String: Int64]?) {
    lastUsedOutcome { try AssistantKeyReaders.readLastUsed(bytes, integrityKey: integrityKey) }
  }

  /// Verify's search of a version-2 file for `id`: (`search`, time).
  static func lastUsedSearch(_ bytes: [UInt8], id: AssistantKeyID, integrityKey: SymmetricKey) -> (String, Int64?) {
    switch AssistantKeyReaders.searchLastUsed(bytes, id: id, integrityKey: integrityKey) {
    case .refused: return ("refused", nil)
    case .absent: return ("absent", nil)
    case .never: return ("never", nil)
    case .used(let time): return ("used", time)
    }
  }

  static func check(_ file: LastUsedFileV2) throws -> [String] {
    guard let integrityKey = try integrityKey(file.integrityKey) else {
      return ["'integrity_key' is not 32 bytes of hex"]
    }
    return file.tests.compactMap { test in
      guard let bytes = Hex.decode(test.file) else { return "case \(test.id) (\(test.comment)): 'file' is not hex" }
      let (result, damage, table) = lastUsedOutcome(bytes, integrityKey: integrityKey)
      var search: (String, Int64?) = (test.search ?? "", test.searchTime)
      if let text = test.searchID {
        guard let id = AssistantKeyID(text) else {
          return "case \(test.id) (\(test.comment)): 'search_id' is not a public id"
        }
        search = lastUsedSearch(bytes, id: id, integrityKey: integrityKey)
      }
      guard result == test.result, damage == test.damage, table == test.lastUsed, search.0 == (test.search ?? ""),
        search.1 == test.searchTime
      else {
        return "case \(test.id) (\(test.comment)): got \(result) \(damage ?? "") search \(search.0)"
      }
      return nil
    }
  }
}

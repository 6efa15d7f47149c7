import Foundation
import TaskerTestSupport
import Testing

// What the sync end-to-end tests share: running the real binaries on a
// device, joining with another device's keys, and reading the storage.

extension TestDevice {
  /// Runs tasker and expects exit 0.
  @discardableResult func ok(
    _ arguments: [String], input: String = "", sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> ProcessResult {
    let result = try tasker(arguments, input: input)
    #expect(result.status == 0, "tasker \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
  }

  /// Runs tasker (exit 0) and parses its JSON object.
  func json(_ arguments: [String]) throws -> [String: Any] {
    try #require(try ok(arguments).json() as? [String: Any])
  }

  /// Imports `source`'s keys (the note keys and the sync keyring) through a sync bundle.
  func importKeys(from source: TestDevice) throws {
    let bundle = source.root.path("keys-\(UUID().uuidString).tksync")
    let exported = try source.taskkey(["sync", "export", "--out", bundle, "--passphrase-file", source.passphraseFile])
    #expect(exported.status == 0, "\(exported.stderr)")
    let imported = try taskkey(["sync", "import", bundle, "--passphrase-file", source.passphraseFile])
    #expect(imported.status == 0, "\(imported.stderr)")
  }

  func syncDeviceID() throws -> String {
    try #require(try json(["sync", "status", "--json"])["device"] as? String)
  }

  func tasks() throws -> [[String: Any]] {
    try json(["list", "--all", "--json"])["tasks"] as? [[String: Any]] ?? []
  }

  func taskTitles() throws -> [String] { try tasks().compactMap { $0["title"] as? String } }

  func taskID(_ title: String) throws -> String {
    let found = try tasks().filter { $0["title"] as? String == title }
    #expect(found.count == 1, "one task titled \(title): \(found)")
    return try #require(found.first?["id"] as? String)
  }

  func pageID(_ title: String) throws -> String {
    let pages = try json(["page", "list", "--json"])["pages"] as? [[String: Any]] ?? []
    return try #require(pages.first { $0["title"] as? String == title }?["id"] as? String)
  }

  /// Every task and page as shown, without local ids, sorted.
  func syncContent() throws -> [String] {
    var content: [String] = []
    for task in try tasks() {
      var shown = try json(["show", try #require(task["id"] as? String), "--json"])
      shown["id"] = nil
      shown["plan_order"] = nil
      content.append("task " + canonical(shown))
    }
    for page in try json(["page", "list", "--json"])["pages"] as? [[String: Any]] ?? [] {
      var shown = try json(["page", "show", try #require(page["id"] as? String), "--json"])
      shown["id"] = nil
      content.append("page " + canonical(shown))
    }
    return content.sorted()
  }
}

extension TestDevice {
  func syncSetUp(_ folder: String, name: String) throws {
    try ok(["sync", "setup", folder, "--name", name])
  }

  /// Imports `source`'s keys through a sync bundle, sets up, syncs.
  func syncJoin(keysFrom source: TestDevice, folder: String, name: String, sync: Bool = true) throws {
    try importKeys(from: source)
    try syncSetUp(folder, name: name)
    if sync { try ok(["sync", "now"]) }
  }

  /// Attaches a file named `name` that holds `text` to the task titled
  /// `task`.
  ///
  /// - Returns: the attachment's id.
  @discardableResult func attach(_ text: String, named name: String, toTask task: String) throws -> String {
    let file = root.path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    return try #require(try json(["attach", "add", "--task", try taskID(task), file, "--json"])["id"] as? String)
  }

  /// What the database holds of tasks and pages: listings and rows; with
  /// `everything`, every sync table too (outbox, devices, values, dirty).
  func syncSnapshot(everything: Bool = false) throws -> String {
    let rows = try sqlite(
      "SELECT * FROM tasks ORDER BY id; SELECT * FROM pages ORDER BY id; "
        + "SELECT kind, uid, local_id, state FROM sync_records ORDER BY kind, uid;"
        + (everything
          ? " SELECT seq, hex(object) FROM sync_outbox ORDER BY seq; SELECT * FROM sync_devices ORDER BY device;"
            + " SELECT * FROM sync_values ORDER BY name; SELECT * FROM sync_dirty ORDER BY kind, local_id;"
          : ""))
    #expect(rows.status == 0, "\(rows.stderr)")
    return try ok(["list", "--all", "--json"]).stdoutText + (try ok(["page", "list", "--json"]).stdoutText)
      + rows.stdoutText
  }
}

/// Three devices on one folder, each synced once, A last (so A knows B
/// and C and their box keys); A wrote the task "before removal" with a note.
struct ThreeDevices {
  let folder: TemporaryDirectory
  let a: TestDevice
  let b: TestDevice
  let c: TestDevice

  init() throws {
    folder = try TemporaryDirectory()
    a = try TestDevice(passphrase: "device a")
    b = try TestDevice(passphrase: "device b")
    c = try TestDevice(passphrase: "device c")
    try a.syncSetUp(folder.path, name: "a")
    try a.ok(["add", "before removal", "--notes", "-"], input: "a note everyone had")
    try a.ok(["sync", "now"])
    try b.syncJoin(keysFrom: a, folder: folder.path, name: "b")
    try c.syncJoin(keysFrom: a, folder: folder.path, name: "c")
    try a.ok(["sync", "now"])
  }

  var root: String { folder.path + "/tasker-sync" }

  /// The header epoch of every object of `device`, by seq.
  func epochs(of device: String) throws -> [UInt64: UInt32] {
    var found: [UInt64: UInt32] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: root + "/d/" + device) {
      let bytes = try fileBytes(root + "/d/" + device + "/" + name)
      found[try #require(UInt64(name, radix: 16))] = bytes[6..<10].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
    return found
  }

  /// The storage's files and the three vaults' files (`diskState`).
  func disk() throws -> [String: [UInt8]?] { try diskState(storage: root, vaults: [a, b, c]) }
}

/// The files of the storage at `root` and of each device's vault, by
/// path: what a refused command must leave as it was.
func diskState(storage root: String, vaults devices: [TestDevice]) throws -> [String: [UInt8]?] {
  var found = try storageFiles(root).mapKeys { "storage/" + $0 }
  for (index, device) in devices.enumerated() {
    found.merge(try storageFiles(device.vaultDirectory).mapKeys { "vault-\(index)/" + $0 }) { $1 }
  }
  return found
}

extension Dictionary {
  /// The same values under keys made by `transform`.
  func mapKeys(_ transform: (Key) -> Key) -> [Key: Value] {
    Dictionary(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
  }
}

/// Runs `sync now` on the devices in each order given (indices), each exit 0.
func syncRounds(_ devices: [TestDevice], orders: [[Int]]) throws {
  for order in orders {
    for index in order {
      let result = try devices[index].tasker(["sync", "now"])
      #expect(result.status == 0, "sync on device \(index): \(result.stderr)")
    }
  }
}

func canonical(_ object: [String: Any]) -> String {
  let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
  return String(decoding: data, as: UTF8.self)
}

func seqName(_ seq: Int) -> String { String(format: "%016x", seq) }

func fileBytes(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Every entry under `directory` by relative path: a regular file's bytes,
/// nil for anything else (links are not followed).
func storageFiles(_ directory: String) throws -> [String: [UInt8]?] {
  var found: [String: [UInt8]?] = [:]
  func walk(_ relative: String) throws {
    let path = relative.isEmpty ? directory : directory + "/" + relative
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      let child = relative.isEmpty ? name : relative + "/" + name
      let type = try FileManager.default.attributesOfItem(atPath: directory + "/" + child)[.type] as? FileAttributeType
      if type == .typeDirectory {
        found[child] = .some(nil)
        try walk(child)
      } else if type == .typeRegular {
        found[child] = try fileBytes(directory + "/" + child)
      } else {
        found[child] = .some(nil)
      }
    }
  }
  try walk("")
  return found
}

extension Array where Element == UInt8 {
  /// Whether `needle` occurs in these bytes.
  func containsBytes(_ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, needle.count <= count else { return false }
    return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
  }
}

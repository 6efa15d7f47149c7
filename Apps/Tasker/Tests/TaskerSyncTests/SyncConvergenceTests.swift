import Foundation
import TaskCrypto
import TaskerCore
import TaskerTestSupport
import Testing

@testable import TaskerSync

/// The merge as a property, at the library level: three stores share one
/// folder target; a seeded generator interleaves local changes and syncs
/// on random devices; after everything has been exchanged, every device
/// shows the same tasks, pages and conflicts, no note text was lost or
/// invented, and no object was ever refused (docs/formats/sync-storage.md,
/// *Applying: the merge*).
///
/// Which text is allowed to disappear is tracked from the outside: a text
/// goes only when a device replaced it while it was that device's body
/// (an edit of the notes or the body), or deleted the record while it was
/// the body or one of the record's conflicts there. Every other text ever
/// written must be, on every device, the shown body of a record or one of
/// the conflict texts (of a shown or a deleted record), and nothing else
/// may be.
///
/// The long run: `TASKER_SYNC_PROPERTY_SEEDS=1000` (seeds 1…1000, also
/// `TASKER_SYNC_PROPERTY_STEPS`, default 120).
@Suite struct SyncConvergenceTests {
  static let quickSeeds: [UInt64] = Array(1...8)
  static let quickSteps = 60

  @Test(arguments: quickSeeds)
  func threeDevicesConverge(seed: UInt64) throws {
    let failures = try SyncScenario.run(seed: seed, steps: Self.quickSteps)
    if failures.isEmpty { return }
    let shortest = try SyncScenario.shortestFailing(seed: seed, steps: Self.quickSteps)
    Issue.record(
      Comment(
        rawValue: SyncScenario.describe(seed: seed, steps: Self.quickSteps, failures: failures, shortest: shortest)))
  }

  @Test func manySeedsConverge() throws {
    let environment = ProcessInfo.processInfo.environment
    guard let count = environment["TASKER_SYNC_PROPERTY_SEEDS"].flatMap({ UInt64($0) }), count > 0 else { return }
    let steps = environment["TASKER_SYNC_PROPERTY_STEPS"].flatMap { Int($0) } ?? 120
    var failed = 0
    for seed in 1...count {
      let failures = try SyncScenario.run(seed: seed, steps: steps)
      if failures.isEmpty { continue }
      failed += 1
      // Shrink only the first: shrinking replays the seed many times.
      let shortest = failed == 1 ? try SyncScenario.shortestFailing(seed: seed, steps: steps) : nil
      Issue.record(
        Comment(rawValue: SyncScenario.describe(seed: seed, steps: steps, failures: failures, shortest: shortest)))
      if failed >= 20 { return }
    }
  }
}

// MARK: - The generator

/// SplitMix64: a small deterministic generator; nothing is drawn from the
/// system for the test's choices (ids, nonces and the wall clock inside
/// the engine stay the product's own).
struct SplitMix64 {
  var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in 0..<bound.
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// True `percent` times in a hundred.
  mutating func percent(_ percent: Int) -> Bool { below(100) < percent }

  mutating func element<T>(_ items: [T]) -> T { items[below(items.count)] }
}

// MARK: - The scenario

/// One run of the property: the devices, the ledger of texts and the log.
final class SyncScenario {
  /// One device: its own directory, store and engine.
  final class Device {
    let name: String
    let directory: TemporaryDirectory
    let store: TaskStore
    let configuration: SyncConfiguration
    let engine: SyncEngine

    init(
      name: String, device: String, folder: String, targetID: String, syncKeyring: SyncKeyring, keyring: Keyring
    ) throws {
      self.name = name
      directory = try TemporaryDirectory()
      store = try TaskStore(databasePath: directory.path("t.db"), keys: keyring)
      configuration = SyncConfiguration(folder: folder, targetID: targetID, device: device, name: name)
      engine = try SyncEngine(
        store: store, configuration: configuration,
        keys: try SyncKeys(
          keyring: syncKeyring, boxSecretKey: try AnonymousBox.generateKeyPair().secretKey, save: { _ in }),
        target: FolderTarget(root: configuration.root))
    }
  }

  let seed: UInt64
  var random: SplitMix64
  let shared: TemporaryDirectory
  let keyring: Keyring
  let syncKeyring: SyncKeyring
  let targetID: String
  let devices: [Device]
  /// Every note or body text any device wrote (each unique, never empty).
  var written: Set<String> = []
  /// The texts a device replaced while they were its body, or deleted
  /// with their record while they were its body or conflicts.
  var removed: Set<String> = []
  /// What happened, one line a step.
  var log: [String] = []
  var failures: [String] = []
  var counter = 0

  init(seed: UInt64) throws {
    self.seed = seed
    random = SplitMix64(seed: seed)
    let keyring = try Keyring.generate()
    let syncKeyring = try SyncKeyring.generate().keyring
    let shared = try TemporaryDirectory()
    self.shared = shared
    let targetID = SyncHex.randomID()
    (self.keyring, self.syncKeyring, self.targetID) = (keyring, syncKeyring, targetID)
    let target = FolderTarget(root: shared.path + "/tasker-sync")
    try target.prepare()
    guard try target.createMarker(SyncObjectFormat.marker(targetID: Hex.decode(targetID)!, key: syncKeyring.newest))
    else {
      throw SetupFailure("the marker exists already")
    }
    // Device ids from the seed, not SyncHex.randomID(): the engine pulls
    // devices in id order, which decides the local ids rows get, which
    // decides what a step picks; so a seed replays the same way.
    var ids = SplitMix64(seed: ~seed)
    devices = try ["A", "B", "C"].map { name in
      let device = Hex.encode((0..<16).map { _ in UInt8(truncatingIfNeeded: ids.next()) })
      return try Device(
        name: name, device: device, folder: shared.path, targetID: targetID, syncKeyring: syncKeyring,
        keyring: keyring)
    }
  }

  /// Runs the seed's first `steps` steps, then syncs until nothing
  /// changes, then checks the property.
  ///
  /// - Returns: what broke it, empty when it held.
  static func run(seed: UInt64, steps: Int) throws -> [String] {
    try SyncScenario(seed: seed).play(steps: Array(0..<steps))
  }

  /// A smallest set of the seed's steps that still fails (ddmin-like:
  /// chunks, then single steps, removed while it keeps failing). Each step
  /// draws from its own generator (seed, step), so leaving a step out
  /// does not change what the others draw; a step whose task or page is
  /// gone picks another one, or adds one.
  ///
  /// - Returns: the steps, their log and the failures; nil when the full
  ///   run does not fail again (the engine's own timing differs per run).
  static func shortestFailing(seed: UInt64, steps: Int) throws -> (steps: [Int], log: [String], failures: [String])? {
    func attempt(_ candidate: [Int]) throws -> (log: [String], failures: [String])? {
      let scenario = try SyncScenario(seed: seed)
      let failures = try scenario.play(steps: candidate)
      return failures.isEmpty ? nil : (scenario.log, failures)
    }
    var kept = Array(0..<steps)
    guard var best = try attempt(kept) else { return nil }
    var chunk = max(1, kept.count / 2)
    while true {
      var index = 0
      while index < kept.count {
        var candidate = kept
        candidate.removeSubrange(index..<min(kept.count, index + chunk))
        if let found = try attempt(candidate) {
          kept = candidate
          best = found
        } else {
          index += chunk
        }
      }
      if chunk == 1 { break }
      chunk = max(1, chunk / 2)
    }
    return (kept, best.log, best.failures)
  }

  static func describe(
    seed: UInt64, steps: Int, failures: [String], shortest: (steps: [Int], log: [String], failures: [String])?
  ) -> String {
    var text = "seed \(seed), \(steps) steps: \(failures.count) failure(s):\n  " + failures.joined(separator: "\n  ")
    if let shortest {
      text +=
        "\nshrunk to \(shortest.steps.count) of the seed's steps \(shortest.steps):\n    "
        + shortest.log.joined(separator: "\n    ") + "\n  then: " + shortest.failures.joined(separator: "\n  ")
    } else {
      text += "\n(not shrunk, or the full run did not fail again when replayed: clocks come from the wall clock)"
    }
    return text
  }

  /// How often a step syncs instead of changing something: seeds differ,
  /// from rare syncs (long concurrent stretches) to frequent ones.
  var syncPercent: Int { [10, 25, 40][Int(seed % 3)] }

  /// The generator of step `step` (or of the final syncs).
  func generator(step: UInt64) -> SplitMix64 {
    var mixer = SplitMix64(seed: seed ^ (step &* 0xD1B5_4A32_D192_ED03))
    return SplitMix64(seed: mixer.next())
  }

  func play(steps: [Int]) throws -> [String] {
    for step in steps {
      random = generator(step: UInt64(step))
      let device = devices[random.below(devices.count)]
      if random.percent(syncPercent) {
        try sync(device, label: "step \(step)")
      } else {
        try change(on: device, step: step)
      }
    }
    random = generator(step: 1 << 40)
    try settle()
    if failures.isEmpty { try check() }
    if failures.isEmpty { try checkLateDevice() }
    return failures
  }

  /// A device set up after everything (reading past every fold the others
  /// made) shows what the others show.
  func checkLateDevice() throws {
    let late = try Device(
      name: "D", device: SyncHex.randomID(), folder: shared.path, targetID: targetID, syncKeyring: syncKeyring,
      keyring: keyring)
    for _ in 0..<2 {
      let report = try late.engine.run()
      for refusal in report.refused {
        failures.append("late device D refused \(refusal.device) seq \(refusal.seq): \(refusal.reason)")
      }
    }
    let (mine, theirs) = (try view(of: late), try view(of: devices[0]))
    if mine.tasks != theirs.tasks || mine.pages != theirs.pages || mine.attachments != theirs.attachments
      || mine.conflicts.map(\.texts) != theirs.conflicts.map(\.texts)
    {
      failures.append(
        "a device set up last differs from A: \(mine.tasks.count) / \(theirs.tasks.count) tasks, "
          + "\(mine.pages.count) / \(theirs.pages.count) pages, \(mine.attachments) / \(theirs.attachments)")
    }
  }

  // MARK: Texts

  /// A new unique text: a tag, the counter, and a few random characters
  /// (letters, spaces, a newline, accents, CJK, an emoji).
  func text(_ tag: String) -> String {
    counter += 1
    let alphabet = ["a", "b", "c", "x", "y", "z", " ", "\n", "é", "ß", "日", "本", "🙂", "\"", "\\"]
    let tail = (0..<(3 + random.below(12))).map { _ in random.element(alphabet) }.joined()
    return "\(tag)\(seed)-\(counter):\(tail)"
  }

  func note(_ tag: String) -> String {
    let made = text(tag)
    written.insert(made)
    return made
  }

  // MARK: Steps

  func sync(_ device: Device, label: String) throws {
    // Now and then a sync compacts: a fold, then whatever every device has acknowledged is removed.
    let compacting = random.percent(10)
    let report = try device.engine.run(compacting: compacting)
    log.append(
      "\(label): \(device.name) sync\(compacting ? " compacting (folded \(report.compaction.folded), removed \(report.compaction.removed))" : "") (uploaded \(report.uploaded), applied \(report.applied.values.reduce(0, +)), changed \(report.recordsChanged))"
    )
    for refusal in report.refused {
      failures.append("\(label): \(device.name) refused \(refusal.device) seq \(refusal.seq): \(refusal.reason)")
    }
  }

  /// The conflict texts `device` keeps for a local row.
  func conflictTexts(_ device: Device, kind: SyncRecord.Kind, localID: Int64) throws -> [String] {
    try SyncEngine.conflicts(in: device.store).first { $0.kind == kind && $0.localID == localID }?.texts.map(\.text)
      ?? []
  }

  func change(on device: Device, step: Int) throws {
    let store = device.store
    let tasks = try store.tasks(.all)
    let pages = try store.pages()
    let label = "step \(step): \(device.name)"
    var choice = random.below(100)
    if tasks.isEmpty && choice >= 20 && choice < 70 { choice = 0 }
    if pages.isEmpty && choice >= 80 { choice = 70 }
    switch choice {
    case 0..<20:
      var draft = TaskDraft(title: text("t"))
      draft.notes = random.percent(80) ? note("n") : ""
      draft.due = random.percent(50) ? try randomDay() : nil
      draft.priority = Priority(rawValue: random.below(4))!
      draft.contexts = random.percent(50) ? random.element(["@home", "@work", "@home @phone", "@errands"]) : ""
      let task = try store.addTask(draft)
      log.append("\(label) add task \(task.id) \(quoted(draft.title)) notes \(quoted(draft.notes))")
    case 20..<45:
      let task = tasks[random.below(tasks.count)]
      var changes = TaskChanges()
      var what: String
      switch random.below(5) {
      case 0:
        changes.title = text("t")
        what = "title \(quoted(changes.title!))"
      case 1, 2:
        let before = try store.task(id: task.id).notes
        if !before.isEmpty { removed.insert(before) }
        changes.notes = note("n")
        what = "notes \(quoted(before)) -> \(quoted(changes.notes!))"
      case 3:
        changes.priority = Priority(rawValue: random.below(4))!
        what = "priority \(changes.priority!.rawValue)"
      default:
        if random.percent(50) {
          changes.due = .some(random.percent(70) ? try randomDay() : nil)
          what = "due \(changes.due!.map(\.description) ?? "none")"
        } else {
          changes.contexts = random.element(["", "@home", "@work @phone", "@errands"])
          what = "contexts \(quoted(changes.contexts!))"
        }
      }
      try store.editTask(id: task.id, changes)
      log.append("\(label) edit task \(task.id) \(what)")
    case 45..<55:
      let task = tasks[random.below(tasks.count)]
      if task.status == .open {
        try store.completeTask(id: task.id)
        log.append("\(label) complete task \(task.id)")
      } else {
        try store.reopenTask(id: task.id)
        log.append("\(label) reopen task \(task.id)")
      }
    case 55..<70:
      let task = tasks[random.below(tasks.count)]
      let before = try store.task(id: task.id).notes
      let conflicts = try conflictTexts(device, kind: .task, localID: task.id)
      removed.formUnion(([before] + conflicts).filter { !$0.isEmpty })
      try store.deleteTask(id: task.id)
      log.append(
        "\(label) delete task \(task.id) notes \(quoted(before)) conflicts [\(conflicts.map(quoted).joined(separator: ", "))]"
      )
    case 70..<80:
      let title = text("p")
      let body = random.percent(85) ? note("b") : ""
      let page = try store.addPage(title: title, body: body)
      log.append("\(label) add page \(page.id) \(quoted(title)) body \(quoted(body))")
    case 80..<94:
      let page = pages[random.below(pages.count)]
      let before = try store.page(id: page.id).body
      switch random.below(3) {
      case 0:
        let title = text("p")
        try store.editPage(id: page.id, title: title)
        log.append("\(label) edit page \(page.id) title \(quoted(title))")
      default:
        removed.insert(before)
        let body = note("b")
        let title = random.percent(30) ? text("p") : nil
        try store.editPage(id: page.id, title: title, body: body)
        log.append(
          "\(label) edit page \(page.id) body \(quoted(before)) -> \(quoted(body))\(title.map { " title \(quoted($0))" } ?? "")"
        )
      }
    case 94..<97:
      let attachments = try store.attachments()
      if !attachments.isEmpty && random.percent(40) {
        let gone = try store.removeAttachment(id: attachments[random.below(attachments.count)].id)
        log.append("\(label) remove attachment \(gone.id) \(quoted(gone.name))")
      } else if !tasks.isEmpty || !pages.isEmpty {
        let owner: AttachmentOwner =
          pages.isEmpty || (!tasks.isEmpty && random.percent(60))
          ? .task(tasks[random.below(tasks.count)].id) : .page(pages[random.below(pages.count)].id)
        let name = "file \(step)-\(random.below(1_000_000)).txt"
        var content = Array(name.utf8)
        let added = try store.addAttachment(to: owner, name: name, mediaType: "text/plain") {
          defer { content = [] }
          return content
        }
        log.append("\(label) attach \(added.id) \(quoted(name)) to \(owner.record)")
      }
    default:
      let page = pages[random.below(pages.count)]
      let before = try store.page(id: page.id).body
      let conflicts = try conflictTexts(device, kind: .page, localID: page.id)
      removed.formUnion(([before] + conflicts).filter { !$0.isEmpty })
      try store.deletePageWithAttachments(id: page.id)
      log.append(
        "\(label) delete page \(page.id) body \(quoted(before)) conflicts [\(conflicts.map(quoted).joined(separator: ", "))]"
      )
    }
  }

  func randomDay() throws -> CalendarDate {
    try CalendarDate(
      parsing: "2026-\(String(format: "%02d", 1 + random.below(12)))-\(String(format: "%02d", 1 + random.below(28)))")
  }

  func quoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\n", with: "\\n") + "\""
  }

  /// Syncs every device in a random order, round after round, until a
  /// whole round moves nothing.
  func settle() throws {
    for round in 1...6 {
      var moved = false
      var order = devices
      for index in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(index, random.below(index + 1)) }
      for device in order {
        let report = try device.engine.run()
        for refusal in report.refused {
          failures.append(
            "final round \(round): \(device.name) refused \(refusal.device) seq \(refusal.seq): \(refusal.reason)")
        }
        if report.uploaded > 0 || !report.applied.isEmpty || report.recordsChanged > 0 { moved = true }
      }
      log.append("final round \(round): \(order.map(\.name).joined()) \(moved ? "moved" : "quiet")")
      if !moved { return }
    }
    failures.append("still changing after 6 rounds of syncing every device")
  }

  // MARK: The property

  struct TaskView: Hashable, CustomStringConvertible {
    var title: String
    var notes: String
    var due: String
    var priority: Int
    var status: String
    var completed: Int64?
    var created: Int64
    var contexts: String
    var description: String {
      "(\(title.debugDescription), notes \(notes.debugDescription), due \(due), p\(priority), \(status), completed \(completed.map(String.init) ?? "-"), created \(created), \(contexts.debugDescription))"
    }
  }

  struct PageView: Hashable, CustomStringConvertible {
    var title: String
    var body: String
    var created: Int64
    var updated: Int64
    var description: String { "(\(title.debugDescription), body \(body.debugDescription), \(created)/\(updated))" }
  }

  struct ConflictView: Hashable, CustomStringConvertible {
    var kind: String
    var id: String
    var shown: Bool
    var title: String?
    var texts: [String]
    var versions: [String]
    var description: String {
      "\(kind) \(id.prefix(8)) \(shown ? "shown" : "deleted") \(title.map(\.debugDescription) ?? "-") [\(texts.map(\.debugDescription).joined(separator: ", "))]"
    }
  }

  struct View: Equatable {
    var tasks: [TaskView]
    var pages: [PageView]
    var conflicts: [ConflictView]
    var states: [String: SyncRecord]
    /// Shown attachments: the owner's title, the name and the size.
    var attachments: [String]
    /// Shown bodies and conflict texts, empty bodies left out.
    var texts: Set<String>
  }

  func view(of device: Device) throws -> View {
    let store = device.store
    let tasks = try store.tasks(.all).map { summary -> TaskView in
      let task = try store.task(id: summary.id)
      return TaskView(
        title: task.title, notes: task.notes, due: task.due?.description ?? "-", priority: task.priority.rawValue,
        status: task.status.rawValue, completed: task.completed, created: task.created, contexts: task.contexts)
    }.sorted { $0.description < $1.description }
    let pages = try store.pages().map { summary -> PageView in
      let page = try store.page(id: summary.id)
      return PageView(title: page.title, body: page.body, created: page.created, updated: page.updated)
    }.sorted { $0.description < $1.description }
    let conflicts = try SyncEngine.conflicts(in: store).map {
      ConflictView(
        kind: $0.kind.rawValue, id: $0.id, shown: $0.localID != nil, title: $0.title, texts: $0.texts.map(\.text),
        versions: $0.texts.map(\.version))
    }.sorted { ($0.kind, $0.id) < ($1.kind, $1.id) }
    let states = try store.withSyncTransaction { rows in
      try rows.everyState().map { ("\($0.kind)/\($0.uid)", try SyncRecord.stored($0.state)) }
    }
    let attachments = try store.attachments().map { attachment -> String in
      let owner = try attachment.taskID.map { try store.task(id: $0).title } ?? store.page(id: attachment.pageID!).title
      return "\(owner) / \(attachment.name) / \(attachment.byteCount)"
    }.sorted()
    var texts = Set(tasks.map(\.notes) + pages.map(\.body)).subtracting([""])
    for conflict in conflicts { texts.formUnion(conflict.texts) }
    return View(
      tasks: tasks, pages: pages, conflicts: conflicts, states: Dictionary(uniqueKeysWithValues: states),
      attachments: attachments, texts: texts)
  }

  func check() throws {
    let views = try devices.map { try view(of: $0) }
    let first = views[0]
    for (device, view) in zip(devices, views).dropFirst() {
      let one = devices[0].name
      if view.tasks != first.tasks {
        failures.append(
          "tasks differ between \(one) and \(device.name):\n    only \(one): "
            + Set(first.tasks).subtracting(view.tasks).map(\.description).sorted().joined(separator: "; ")
            + "\n    only \(device.name): "
            + Set(view.tasks).subtracting(first.tasks).map(\.description).sorted().joined(separator: "; ")
            + "\n    counts \(first.tasks.count) / \(view.tasks.count)")
      }
      if view.pages != first.pages {
        failures.append(
          "pages differ between \(one) and \(device.name):\n    only \(one): "
            + Set(first.pages).subtracting(view.pages).map(\.description).sorted().joined(separator: "; ")
            + "\n    only \(device.name): "
            + Set(view.pages).subtracting(first.pages).map(\.description).sorted().joined(separator: "; "))
      }
      if view.attachments != first.attachments {
        failures.append(
          "attachments differ between \(one) and \(device.name):\n    \(one): "
            + first.attachments.joined(separator: "; ") + "\n    \(device.name): "
            + view.attachments.joined(separator: "; "))
      }
      if view.conflicts != first.conflicts {
        failures.append(
          "conflicts differ between \(one) and \(device.name):\n    \(one): "
            + first.conflicts.map(\.description).joined(separator: "; ") + "\n    \(device.name): "
            + view.conflicts.map(\.description).joined(separator: "; "))
      }
      if view.states != first.states {
        let keys = Set(first.states.keys).union(view.states.keys).filter { first.states[$0] != view.states[$0] }
        failures.append(
          "kept sync states differ between \(one) and \(device.name) for \(keys.count) record(s): "
            + keys.sorted().prefix(5).map { key in
              "\(key): \(one) \(first.states[key].map(Self.summary) ?? "none") / \(device.name) \(view.states[key].map(Self.summary) ?? "none")"
            }.joined(separator: "; "))
      }
    }
    let expected = written.subtracting(removed)
    for (device, view) in zip(devices, views) {
      let invented = view.texts.subtracting(written)
      if !invented.isEmpty {
        failures.append(
          "\(device.name) shows texts no device wrote: \(invented.sorted().map(quoted).joined(separator: ", "))")
      }
      let lost = expected.subtracting(view.texts)
      if !lost.isEmpty {
        failures.append(
          "\(device.name) lost texts nobody replaced or deleted: \(lost.sorted().map(quoted).joined(separator: ", "))")
      }
      let kept = view.texts.intersection(removed)
      if !kept.isEmpty {
        failures.append(
          "\(device.name) still holds texts that were replaced or deleted: \(kept.sorted().map(quoted).joined(separator: ", "))"
        )
      }
    }
  }

  static func summary(_ record: SyncRecord) -> String {
    let fields = record.fields.sorted { $0.key < $1.key }.map {
      "\($0.key)=\(String(decoding: $0.value.value.encoded, as: UTF8.self))@\($0.value.clock.text.prefix(16))"
    }
    return
      "{\(fields.joined(separator: " ")) deleted \(record.deleted.map { String($0.text.prefix(16)) } ?? "-") heads \(record.heads.keys.sorted().map { $0.prefix(6) }) superseded \(record.superseded.count)}"
  }
}

import Foundation
import TaskKeyTestSupport
import Testing

@testable import TaskKeyVectors
@testable import TaskVault

/// The generator of `Vectors/sync-import-v1.json`: merge cases with their
/// outcomes written by hand from docs/formats/sync-bundle.md ("Import"), not
/// computed by the code under test.
@Suite("Sync import vectors")
struct SyncImportVectorTests {
  typealias Store = SyncImportVectors.Store
  typealias Item = SyncImportVectors.Item
  static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Vectors/sync-import-v1.json")

  static func key(_ byte: UInt8) -> String { String(repeating: String(format: "%02x", byte), count: 32) }
  static let (a, b, c) = ("aaaaaaaa", "bbbbbbbb", "cccccccc")

  static func makeFile() -> SyncImportVectors.File {
    var tests = [SyncImportVectors.Case]()
    func add(
      _ comment: String, local: Store, bundle: Store, adopt: Bool = false, keep: Bool = false, error: String? = nil,
      expected: Store? = nil
    ) {
      tests.append(
        .init(
          id: tests.count + 1, comment: comment, local: local, bundle: bundle, adoptPrimary: adopt,
          keepPrimary: keep ? true : nil, result: error == nil ? "valid" : "invalid", error: error,
          expected: expected))
    }
    let localA = Store(keys: [a: key(1)], primary: a, retired: [], items: [])
    let bundleAB = Store(
      keys: [a: key(1), b: key(2)], primary: b, retired: [],
      items: [Item(name: "calendar/token", modified: 100, value: "cal")])
    // Cases 1 and 8 import with --keep-primary: until issue 22 they named no
    // option, so they held only for a reader that took that for keep.
    add(
      "--keep-primary: a key and an item the vault lacks are added; the primary stays", local: localA,
      bundle: bundleAB, keep: true,
      expected: Store(keys: [a: key(1), b: key(2)], primary: a, retired: [], items: bundleAB.items))
    add(
      "--adopt-primary makes the bundle's primary the primary", local: localA, bundle: bundleAB, adopt: true,
      expected: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: bundleAB.items))
    add(
      "a key id held here with other bytes aborts the whole import", local: localA,
      bundle: Store(keys: [a: key(9)], primary: a, retired: [], items: bundleAB.items), error: "key_conflict")
    let localItems = Store(
      keys: [a: key(1)], primary: a, retired: [],
      items: [
        Item(name: "x", modified: 200, value: "local x"), Item(name: "y", modified: 100, value: "old y"),
        Item(name: "z", modified: 50, value: "local z"),
      ])
    add(
      "items: a later bundle 'modified' replaces, an earlier or equal one is kept", local: localItems,
      bundle: Store(
        keys: [a: key(1)], primary: a, retired: [],
        items: [
          Item(name: "x", modified: 150, value: "bundle x"), Item(name: "y", modified: 300, value: "new y"),
          Item(name: "z", modified: 50, value: "bundle z"),
        ]),
      expected: Store(
        keys: [a: key(1)], primary: a, retired: [],
        items: [
          Item(name: "x", modified: 200, value: "local x"), Item(name: "y", modified: 300, value: "new y"),
          Item(name: "z", modified: 50, value: "local z"),
        ]))
    add(
      "a name held by a device-only item here is skipped, never overwritten",
      local: Store(keys: [a: key(1)], primary: a, retired: [], items: [], deviceOnlyItems: ["provider/openai"]),
      bundle: Store(
        keys: [a: key(1)], primary: a, retired: [], items: [Item(name: "provider/openai", modified: 9, value: "x")]),
      expected: Store(keys: [a: key(1)], primary: a, retired: [], items: []))
    add(
      "a key the bundle retired is removed here too, and remembered",
      local: Store(keys: [a: key(1), b: key(2)], primary: a, retired: [], items: []),
      bundle: Store(keys: [a: key(1)], primary: a, retired: [b], items: []),
      expected: Store(keys: [a: key(1)], primary: a, retired: [b], items: []))
    add(
      "a key retired here is not added back by an older bundle that still holds it",
      local: Store(keys: [a: key(1)], primary: a, retired: [b], items: []),
      bundle: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: []),
      expected: Store(keys: [a: key(1)], primary: a, retired: [b], items: []))
    add(
      "--keep-primary: a bundle that retires this vault's primary is refused", local: localA,
      bundle: Store(keys: [b: key(2)], primary: b, retired: [a], items: []), keep: true, error: "retired_key")
    add(
      "--adopt-primary of a key retired here is refused",
      local: Store(keys: [a: key(1)], primary: a, retired: [b], items: []),
      bundle: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: []), adopt: true,
      error: "retired_key")
    add(
      "with --adopt-primary, a bundle that rotated away from the shared primary and retired it moves this vault along",
      local: localA, bundle: Store(keys: [b: key(2)], primary: b, retired: [a], items: []), adopt: true,
      expected: Store(keys: [b: key(2)], primary: b, retired: [a], items: []))
    add(
      "a bundle of the same content changes nothing; no key is ever removed otherwise",
      local: Store(keys: [a: key(1), c: key(3)], primary: c, retired: [], items: bundleAB.items),
      bundle: Store(keys: [a: key(1)], primary: a, retired: [], items: bundleAB.items),
      expected: Store(keys: [a: key(1), c: key(3)], primary: c, retired: [], items: bundleAB.items))
    add(
      "no option: a primary this vault did not hold is adopted (the other device rotated; case 1's stores)",
      local: localA, bundle: bundleAB,
      expected: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: bundleAB.items))
    add(
      "no option: a bundle that rotated and retired this vault's primary moves it along (case 8's stores)",
      local: localA, bundle: Store(keys: [b: key(2)], primary: b, retired: [a], items: []),
      expected: Store(keys: [b: key(2)], primary: b, retired: [a], items: []))
    add(
      "no option: an older bundle whose primary this vault holds does not take the primary back",
      local: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: []),
      bundle: Store(keys: [a: key(1)], primary: a, retired: [], items: []),
      expected: Store(keys: [a: key(1), b: key(2)], primary: b, retired: [], items: []))
    return .init(
      format: SyncImportVectors.format, version: 1,
      description:
        "How a sync bundle merges into the synchronisable store (docs/formats/sync-bundle.md, 'Import'). Merge "
        + "each case's 'bundle' into 'local' (with --adopt-primary when 'adopt_primary', with --keep-primary when "
        + "'keep_primary', else with neither: the automatic choice): valid cases give 'expected', invalid ones are "
        + "refused with 'error' and nothing is written.",
      tests: tests)
  }

  @Test func syncImportVectorsMatchTheCommittedFile() throws {
    #expect(
      try CommittedVectors.drifted(json: Self.makeFile(), name: "sync-import-v1.json").isEmpty,
      "Vectors/sync-import-v1.json drifted; run 'make vectors'")
  }

  @Test func everyCaseMergesAsStatedAndAWrongExpectationFails() throws {
    let result = try #require(try SyncImportVectors.check(JSONEncoder().encode(Self.makeFile())))
    #expect(result.failures.isEmpty, "\(result.failures)")
    #expect(result.cases == 14)
    var broken = Self.makeFile()
    broken.tests[0].expected?.primary = Self.b
    broken.tests[2].error = "retired_key"
    broken.tests[11].keepPrimary = true
    broken.tests[12].adoptPrimary = true
    broken.tests[12].keepPrimary = true
    let brokenResult = try #require(try SyncImportVectors.check(JSONEncoder().encode(broken)))
    #expect(brokenResult.failures.count == 4)
  }
}

import Foundation
import TaskKeyTestSupport
import Testing

/// Real backup tools, run with their documented exclusion flag over the
/// data directory (the parent of the vault directory), must store
/// `vault.tkv` and nothing of `device-only/`.
@Suite("Real backup tools honour the exclusion markers", .serialized)
struct RealToolTests {
  /// Checks what a tool stored: the listing and the extracted bytes.
  func expectOnlySynchronisableStore(
    listing: String, extracted root: String, vault: FullVault, tool: String
  ) throws {
    #expect(listing.contains("keys/vault.tkv"), "\(tool) did not store vault.tkv: \(listing)")
    for name in ["device.tkv", "assistant-keys.registry", "assistant-keys.last-used", "unlock.session"] {
      #expect(!listing.contains(name), "\(tool) stored device-only/\(name)")
    }
    let files = allFiles(under: root)
    #expect(files.contains { $0.0.hasSuffix("keys/vault.tkv") }, "\(tool): vault.tkv not extracted")
    #expect(!files.contains { $0.0.contains("device-only/") && !$0.0.hasSuffix("CACHEDIR.TAG") })
    let needles = try vault.forbiddenNeedles()
    for (path, bytes) in files {
      for (what, needle) in needles {
        #expect(!contains(bytes, needle), "\(tool): \(what) found in \(path)")
      }
    }
  }

  @Test func gnuTarExcludeCachesStoresTheVaultFileButNoDeviceOnlyFile() throws {
    let vault = try FullVault()
    let archive = vault.home.path("data.tar")
    try runTool(["tar", "--exclude-caches", "-cf", archive, "-C", vault.home.url.path, "keys"])
    let listing = try runTool(["tar", "-tf", archive]).output
    let out = vault.home.path("extracted")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    try runTool(["tar", "-xf", archive, "-C", out])
    try expectOnlySynchronisableStore(listing: listing, extracted: out, vault: vault, tool: "tar")
    // The archive's raw bytes hold no plaintext either.
    let raw = try fileBytes(archive)
    for (what, needle) in try vault.forbiddenNeedles() { #expect(!contains(raw, needle), "tar archive: \(what)") }
  }

  @Test(.enabled(if: toolAvailable("restic"), "restic is not installed (apt-get install restic); skipped"))
  func resticExcludeCachesStoresTheVaultFileButNoDeviceOnlyFile() throws {
    let vault = try FullVault()
    let (listing, environment) = try resticBackup(vault, options: ["--exclude-caches"])
    let out = vault.home.path("extracted")
    try runTool(["restic", "restore", "latest", "--quiet", "--target", out], environment: environment)
    try expectOnlySynchronisableStore(listing: listing, extracted: out, vault: vault, tool: "restic")
  }

  @Test(.enabled(if: toolAvailable("borg"), "borgbackup is not installed (apt-get install borgbackup); skipped"))
  func borgExcludeCachesStoresTheVaultFileButNoDeviceOnlyFile() throws {
    let vault = try FullVault()
    let repository = vault.home.path("borg-repo")
    let environment = [
      "BORG_PASSPHRASE": "", "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK": "yes",
      "BORG_BASE_DIR": vault.home.path("borg-base"), "BORG_RELOCATED_REPO_ACCESS_IS_OK": "yes",
    ]
    try runTool(["borg", "init", "--encryption=none", repository], environment: environment)
    try runTool(
      ["borg", "create", "--exclude-caches", repository + "::snapshot", "keys"], environment: environment,
      in: vault.home.url.path)
    let listing = try runTool(["borg", "list", "--short", repository + "::snapshot"], environment: environment).output
    let out = vault.home.path("extracted")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    try runTool(["borg", "extract", repository + "::snapshot"], environment: environment, in: out)
    try expectOnlySynchronisableStore(listing: listing, extracted: out, vault: vault, tool: "borg")
  }

  @Test(.enabled(if: toolAvailable("restic"), "restic is not installed (apt-get install restic); skipped"))
  func resticExcludeIfPresentNobackupAlsoSkipsTheDeviceOnlyDirectory() throws {
    let (listing, _) = try resticBackup(try FullVault(), options: ["--exclude-if-present", ".nobackup"])
    #expect(listing.contains("keys/vault.tkv"))
    // restic keeps the directory entry and the marker itself, nothing else.
    for name in ["device.tkv", "assistant-keys", "unlock.session"] {
      #expect(!listing.contains("device-only/" + name), "\(listing)")
    }
  }

  /// A new restic repository in the vault's home and one backup of its
  /// `keys/` directory with `options`: the listing of that snapshot, and
  /// the environment that reaches the repository.
  func resticBackup(_ vault: FullVault, options: [String]) throws -> (listing: String, environment: [String: String]) {
    let environment = [
      "RESTIC_PASSWORD": "test-only-repository-password", "RESTIC_REPOSITORY": vault.home.path("restic-repo"),
    ]
    try runTool(["restic", "init", "--quiet"], environment: environment)
    try runTool(["restic", "backup", "--quiet"] + options + [vault.home.url.path + "/keys"], environment: environment)
    return (try runTool(["restic", "ls", "latest"], environment: environment).output, environment)
  }
}

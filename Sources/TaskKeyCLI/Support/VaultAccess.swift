import AssistantKeys
import CommandKit
import TaskCrypto
import TaskVault

/// Finds the vault directory: `TASKKEY_HOME`, else `$XDG_DATA_HOME/tasker/keys`,
/// else `~/.local/share/tasker/keys`.
///
/// - Throws: a usage error when none of them is set.
func vaultDirectory(_ streams: StandardStreams) throws -> String {
  guard let directory = Vault.defaultDirectory(environment: streams.environment) else {
    throw UsageError(
      message: "cannot find the vault: neither TASKKEY_HOME nor HOME is set",
      usage: "set TASKKEY_HOME to the vault directory")
  }
  return directory
}

/// Opens the vault at the default location, putting back missing backup
/// exclusion markers on the way (a restore by a tool that drops them).
///
/// - Throws: `TaskVaultError` as `Vault(at:)`.
func openVault(_ streams: StandardStreams) throws -> Vault {
  let directory = try vaultDirectory(streams)
  streams.detail("vault: \(directory)")
  let vault = try Vault(at: directory)
  restoreMarkers(vault, streams)
  return vault
}

/// Opens the assistant-key registry of the vault at the default location;
/// the vault must be unlocked.
///
/// - Throws: `TaskVaultError`, `AssistantKeyError`.
func openRegistry(_ streams: StandardStreams) throws -> AssistantKeyRegistry {
  try AssistantKeyRegistry(vault: try openVault(streams))
}

/// Puts back backup exclusion markers of `device-only/` that are missing,
/// for example after a restore by a tool that keeps `CACHEDIR.TAG` but not
/// `.nobackup`. Says what it did; a failure is a note, not an error (the
/// command goes on, and `taskkey doctor` reports it).
func restoreMarkers(_ vault: Vault, _ streams: StandardStreams) {
  guard let state = try? vault.exclusionMarkerState(), !state.missing.isEmpty else { return }
  let names = state.missing.map(\.rawValue).joined(separator: ", ")
  do {
    try vault.prepareDeviceOnlyDirectory()
    streams.note("taskkey: put back the backup exclusion marker(s) of device-only/: \(names)")
  } catch {
    streams.note("taskkey: could not put back \(names) in device-only/ (\(error)); run 'taskkey doctor'")
  }
}

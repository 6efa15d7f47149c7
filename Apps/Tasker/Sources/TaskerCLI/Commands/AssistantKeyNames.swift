import AssistantKeys
import CommandKit
import TaskVault

/// The assistant keys of the vault's registry, read through
/// `AssistantKeys` as `taskkey list` reads them, for the commands that name
/// a key: `tasker gate budget --key`, `approvals approve|deny --all-from`
/// and the per-key rows of `tasker gate show`.
enum AssistantKeyNames {
  /// Every key in the registry, revoked ones included, oldest first;
  /// none when the environment names no vault or the vault was never
  /// created (no key can have been minted then).
  ///
  /// - Throws: the registry's errors (`AssistantKeyError`: a locked vault,
  ///   a damaged registry) and the vault's (`TaskVaultError`).
  static func records(environment: [String: String]) throws -> [AssistantKeyRecord] {
    guard let directory = Vault.defaultDirectory(environment: environment) else { return [] }
    let vault: Vault
    do {
      vault = try Vault(at: directory)
    } catch TaskVaultError.notInitialised {
      return []
    }
    return try AssistantKeyRegistry(vault: vault).keys()
  }

  /// The key `text` names: a public id (`tkid_` and 16 lowercase hex
  /// digits) as it is, without reading the registry; otherwise an
  /// assistant's name, which names its current key (the one `taskkey
  /// rotate --assistant` would replace), or, when the name has no current
  /// key, its only key. A text that spells an id is always read as an id.
  ///
  /// - Parameters:
  ///   - text: the option's value.
  ///   - option: the option, for the messages.
  ///   - records: reads the registry, only when `text` is a name.
  /// - Returns: the key's public id.
  /// - Throws: `CLIError.malformedKeyID` (exit 64) for a text that starts
  ///   with `tkid_` but is no id, `.unknownAssistantName` (exit 22) when no key has
  ///   the name, `.ambiguousAssistantName` (exit 64) when it names several
  ///   and none is current, and what `records` throws.
  static func resolve(_ text: String, option: String, records: () throws -> [AssistantKeyRecord]) throws
    -> AssistantKeyID
  {
    if let id = AssistantKeyID(text) { return id }
    if text.hasPrefix(AssistantKeyID.prefix) {
      throw CLIError.malformedKeyID(option: option, text: text)
    }
    let named = try records().filter { $0.name == text }
    let current = named.filter { $0.status == .active }
    if current.count == 1 { return current[0].id }
    if current.isEmpty && named.count == 1 { return named[0].id }
    guard !named.isEmpty else { throw CLIError.unknownAssistantName(option: option, name: text) }
    throw CLIError.ambiguousAssistantName(option: option, name: text, ids: named.map(\.id.text))
  }
}

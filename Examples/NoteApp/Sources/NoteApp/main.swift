import AssistantKeys
import Foundation
import TaskCrypto
import TaskVault

// The vault `taskkey init` made: $TASKKEY_HOME, else $XDG_DATA_HOME/tasker/keys,
// else ~/.local/share/tasker/keys. The user unlocks it with `taskkey unlock`;
// the app never sees the passphrase.
let environment = ProcessInfo.processInfo.environment
guard let directory = Vault.defaultDirectory(environment: environment) else {
  FileHandle.standardError.write(Data("noteapp: set TASKKEY_HOME or HOME\n".utf8))
  exit(64)
}

do {
  let vault = try Vault(at: directory)

  // Seal a note body under the primary note key, bound to where it lives;
  // open it again (any key of the keyring opens what it sealed).
  let keyring = try vault.noteKeyring()
  let context = "note/42/body"
  let sealed = try SealedValue.seal("buy milk", using: keyring, context: context)
  let opened = try SealedValue.open(sealed, using: keyring, context: context)
  print("sealed with key \(keyring.primaryID): \(opened)")

  // Check the assistant key an MCP client presented (here: standard input).
  // Every failure is an error: unknown, revoked, expired, malformed.
  if let presented = readLine(strippingNewline: true), !presented.isEmpty {
    let registry = try AssistantKeyRegistry(vault: vault)
    let identity = try registry.verify(presented)
    print("assistant \(identity.name), trust \(identity.trust.rawValue), grants \(identity.grants)")
  }
} catch let error as TaskVaultError {
  // .locked: ask the user to run `taskkey unlock`; never fall back to plain.
  FileHandle.standardError.write(Data("noteapp: \(error)\n".utf8))
  exit(1)
} catch {
  FileHandle.standardError.write(Data("noteapp: \(error)\n".utf8))
  exit(1)
}

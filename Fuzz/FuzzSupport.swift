// What the fuzz harnesses share; scripts/fuzz.sh compiles this file with
// every harness.

import TaskCrypto

/// `text` as the passphrase a harness opens its inputs with.
func fuzzPassphrase(_ text: String) -> SecureBytes {
  let bytes = Array(text.utf8)
  return try! bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
}

/// Whether the KDF costs in a vault-family header at `offset` are above
/// t = 3, m = 64 MiB. Such inputs are skipped: a 4 GiB Argon2id run would
/// only measure libsodium (the caps are proved by unit tests), and would
/// trip libFuzzer's memory limit.
func costlyKDF(_ bytes: [UInt8], at offset: Int) -> Bool {
  guard bytes.count >= offset + 36 else { return false }
  let number = { (start: Int) in bytes[(offset + start)..<(offset + start + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
  return number(28) > 3 || number(32) > 65_536
}

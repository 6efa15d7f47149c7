import TaskCrypto
import TaskKeyVectors

extension VectorFileReaders {
  /// The readers `taskkey` itself uses, handed to the key-file and
  /// passphrase-file checkers so that they check this command's code:
  /// `KeyFile.read` (`seal|open --key-file`) and `--passphrase-file`'s
  /// `PassphraseSource.read`.
  static var taskkey: VectorFileReaders {
    VectorFileReaders(
      keyFile: { try KeyFile.read(path: $0) }, passphraseFile: { try PassphraseSource(file: $0).read(prompt: "") })
  }
}

extension VectorCheck {
  /// Checks one file with `taskkey`'s own readers: the engine of
  /// `taskkey vectors check`.
  static func check(path: String) -> VectorReport {
    check(path: path, readers: .taskkey)
  }
}

extension PassphraseSource {
  /// The source `--passphrase-file path` gives.
  init(file path: String) {
    self.file = path
    self.fd = nil
  }
}

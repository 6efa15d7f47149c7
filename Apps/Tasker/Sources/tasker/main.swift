import CommandKit
import Foundation
import TaskSystem
import TaskerCLI

// The whole command lives in TaskerCLI; this is only the process edge,
// hardened exactly as taskkey's is (SECURITY.md §13). First, before
// anything is read: a crash prints nothing and ends the process (no Swift
// backtrace with registers and the memory they point to, no core file), and
// nothing can attach to it, whichever command runs and whatever note it holds.
do {
  try ProcessHardening.disableCoreDumps()
  try ProcessHardening.endOnFatalSignals()
} catch {
  try? FileDescriptor.standardError.write(Array("tasker: error: cannot harden the process: \(error)\n".utf8))
  exit(ExitCode.osError.rawValue)
}

// Arguments and environment as raw bytes: TaskerMain refuses what is not
// UTF-8 instead of letting it be repaired into other text.
let (arguments, environment) = CommandLineBytes.ofThisProcess()
exit(TaskerMain.run(argumentBytes: arguments, environmentBytes: environment))

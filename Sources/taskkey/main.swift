import CommandKit
import Foundation
import TaskKeyCLI
import TaskSystem

// The whole command lives in TaskKeyCLI; this is only the process edge.
// First, before anything is read: a crash prints nothing and ends the
// process (no Swift backtrace with memory contents, no core file), and
// nothing can attach to it, whichever command runs and whatever key it holds.
do {
  try ProcessHardening.disableCoreDumps()
  try ProcessHardening.endOnFatalSignals()
} catch {
  try? FileDescriptor.standardError.write(Array("taskkey: error: cannot harden the process: \(error)\n".utf8))
  exit(71)
}

let (arguments, environment) = CommandLineBytes.ofThisProcess()
exit(
  TaskKeyMain.run(argumentBytes: arguments, environmentBytes: environment) {
    StandardStreams.process(environment: $0)
  })

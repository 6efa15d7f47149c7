import Foundation
import TaskKeyCLI

// The whole command lives in TaskKeyCLI; this is only the process edge.
let streams = StandardStreams.process(environment: ProcessInfo.processInfo.environment)
exit(TaskKeyMain.run(Array(CommandLine.arguments.dropFirst()), streams: streams))

/// Every sub-command, in the order `tapedeck help`, the man page and the completions list them.
enum CommandList {
    /// Metatypes of value types that hold no state: safe to share between threads.
    nonisolated(unsafe) static let all: [any Command.Type] = [
    ScreenCommand.self,
    NewCommand.self,
    ImportCommand.self,
    ExportCommand.self,
    InfoCommand.self,
    NodesCommand.self,
    ChainCommand.self,
    LearnCommand.self,
    TrackCommand.self,
    BusCommand.self,
    SendCommand.self,
    AutomationCommand.self,
    RegionCommand.self,
    MarkerCommand.self,
    LoopCommand.self,
    PunchCommand.self,
    TakesCommand.self,
    DemoCommand.self,
    RecordCommand.self,
    CalibrateCommand.self,
    PlayCommand.self,
    ControlCommand.self,
    DevicesCommand.self,
    RecoverCommand.self,
    BenchCommand.self,
    CompletionsCommand.self,
    ManCommand.self,
]
}

/// The command queue into the audio thread, from the control thread's side.
extension Engine {
    /// Queues a command. Never waits: a full queue (the audio thread has not taken the last
    /// ``commandQueueCapacity`` commands — it is stuck, or the device stopped) refuses the
    /// command at once, and the refusal is kept, as one line, for ``drainRefusals()`` (the
    /// transport shows it as an error). Sleeping here would freeze the front-end that asked
    /// (the screen's UI thread) for as long as the audio thread is stuck. Before the device
    /// starts, the oldest command makes room instead (nothing takes them yet, and the newest
    /// says what the user wants now). Returns whether the command was queued. Control thread.
    @discardableResult
    func send(_ command: EngineCommand) -> Bool {
        if shared.commands.push(command) { return true }
        if !isStarted {
            _ = shared.commands.pop()
            if shared.commands.push(command) { return true }
        }
        refusedCommands.append(command.name)
        return false
    }

    /// Commands the audio thread can have waiting; one more is refused (``send(_:)``).
    public var commandQueueCapacity: Int { shared.commands.capacity }

    /// What was refused on a full command queue since the last call, as one line (nil: nothing
    /// was). Control thread.
    public func drainRefusals() -> String? {
        guard let last = refusedCommands.last else { return nil }
        defer { refusedCommands = [] }
        let what = refusedCommands.count == 1 ? last : "\(refusedCommands.count) commands (the last: \(last))"
        return "the engine did not take \(what): its queue of \(commandQueueCapacity) commands is full (the audio thread is stuck or the device stopped); try again"
    }
}

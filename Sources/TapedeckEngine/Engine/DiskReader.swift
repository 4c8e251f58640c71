import Synchronization

/// The playback reader thread: answers every voice's seeks and keeps its ring full, reading
/// regions from disk. It sleeps on a signal the audio thread gives when a ring runs low or a
/// seek is posted (and wakes every 20 ms regardless). It never touches the graph: it works
/// on the voices the control thread hands it.
final class DiskReader: @unchecked Sendable {
    private let worker = DiskWorker()
    private var wake: WakeSignal { worker.wake }
    private let voices = Mutex<[TrackVoice]>([])
    private let board: StatusBoard

    init(board: StatusBoard) { self.board = board }

    /// Starts the thread. Control thread.
    func start() -> Bool { worker.start(name: "tapedeck-disk") { [self] in run() } }

    /// Ends the thread. Control thread.
    func stop() { worker.stop() }

    /// The voices to serve from now on (every voice of every live graph). Control thread.
    func serve(_ list: [TrackVoice]) {
        voices.withLock { $0 = list }
        wake.signal()
    }

    /// Serves the voices once on the calling thread (filling rings before the device starts).
    /// Control thread, before ``start()``.
    func fillNow() {
        let list = voices.withLock { $0 }
        while list.contains(where: { $0.service(fail: { [board] in board.fail($0) }) }) {}
    }

    /// ``fillNow()`` with each voice's reads on one of the render's threads (voices share
    /// nothing but the reader pool, which lends a reader to one thread at a time). A
    /// freewheeling export's, between periods.
    func fillNow(on core: RenderCore) {
        let list = voices.withLock { $0 }
        let board = self.board
        core.runEach(count: list.count) { i in
            while list[i].service(fail: { board.fail($0) }) {}
        }
    }

    /// Wakes the thread. Audio thread: one atomic increment.
    @inline(__always)
    func signal() { wake.signal() }

    /// Disk thread.
    private func run() {
        while !worker.quitting {
            let list = voices.withLock { $0 }
            // One block per voice per round, so every track gets its share before any gets more.
            var worked = true
            while worked && !worker.quitting {
                worked = false
                for v in list where v.service(maxBlocks: 1, fail: { [board] in board.fail($0) }) { worked = true }
            }
            wake.wait(timeoutNanoseconds: 20_000_000)
        }
    }
}

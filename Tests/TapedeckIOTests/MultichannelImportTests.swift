import CSndfile
import TapedeckIO
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Files wider than stereo (issue 25, item 5): their channel layout is read and kept, an
/// import splits them into a mono file per channel (every channel kept, bit for bit at the
/// same rate), and the downmix a track hears them with states every gain.
final class MultichannelImportTests: XCTestCase {
    static let fiveOne: [ChannelPosition] = [.left, .right, .center, .lfe, .rearLeft, .rearRight]
    /// A tone per channel, each its own frequency (Hz) and level.
    static let tones: [Double] = [300, 500, 700, 100, 1100, 1300]

    /// A 5.1 file (24-bit, with its layout in the header unless `positions` is nil) holding
    /// a different tone in each channel.
    private func writeFiveOne(_ path: String, sampleRate: Int = 48000, frames: Int = 48000,
                              positions: [ChannelPosition]? = MultichannelImportTests.fiveOne,
                              container: AudioContainer = .wav, encoding: SampleEncoding = .int24) throws -> [[Float]] {
        let channels = MultichannelImportTests.tones.enumerated().map { k, hz in
            sine(hertz: hz, sampleRate: sampleRate, frameCount: frames, amplitude: 0.1 + 0.05 * Double(k))
        }
        unlink(path)
        let writer = try AudioFileWriter(path: path, format: AudioFileFormat(container: container, encoding: encoding,
                                                                             sampleRate: sampleRate, channelCount: 6),
                                         expectedFrameCount: Int64(frames), channelLayout: positions)
        try writer.write(arrays: channels)
        try writer.close()
        return channels
    }

    // MARK: - Layout and downmix

    func testPositionsAreLibsndfilesChannelMapValues() {
        let pairs: [(ChannelPosition, Int)] = [
            (.mono, Int(SF_CHANNEL_MAP_MONO)), (.left, Int(SF_CHANNEL_MAP_LEFT)),
            (.center, Int(SF_CHANNEL_MAP_CENTER)), (.rearLeft, Int(SF_CHANNEL_MAP_REAR_LEFT)),
            (.lfe, Int(SF_CHANNEL_MAP_LFE)), (.sideRight, Int(SF_CHANNEL_MAP_SIDE_RIGHT)),
            (.topRearCenter, Int(SF_CHANNEL_MAP_TOP_REAR_CENTER)), (.ambisonicZ, Int(SF_CHANNEL_MAP_AMBISONIC_B_Z)),
        ]
        for (position, value) in pairs { XCTAssertEqual(Int(position.rawValue), value, "\(position)") }
        XCTAssertEqual(ChannelPosition.allCases.count, Int(SF_CHANNEL_MAP_MAX) - 1)
    }

    func testAWrittenLayoutReadsBackAndAPlainWAVHasNone() throws {
        let folder = makeTempFolder(self)
        _ = try writeFiveOne(folder + "/s.wav")
        let reader = try AudioFileReader(path: folder + "/s.wav")
        XCTAssertEqual(reader.channelLayout.positions, MultichannelImportTests.fiveOne)
        XCTAssertEqual(reader.channelLayout.summary, "L R C LFE Ls Rs")
        _ = try writeFiveOne(folder + "/plain.wav", positions: nil)
        let plain = try AudioFileReader(path: folder + "/plain.wav")
        XCTAssertNil(plain.channelLayout.positions)
        XCTAssertEqual(plain.channelLayout.names, ["1", "2", "3", "4", "5", "6"])
        XCTAssertEqual(plain.sndfileFormat & Int32(SF_FORMAT_TYPEMASK), Int32(SF_FORMAT_WAV), "no layout: classic WAV, which every tool reads")
        // An order the extensible header cannot state (side before rear) is not stored.
        let writer = try AudioFileWriter(path: folder + "/odd.wav", format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 8),
                                         expectedFrameCount: 10,
                                         channelLayout: [.left, .right, .center, .lfe, .sideLeft, .sideRight, .rearLeft, .rearRight])
        XCTAssertFalse(writer.storesChannelLayout)
        try writer.close()
    }

    func testSurroundsAreNamedAsCinemaLayoutsNameThem() {
        XCTAssertEqual(ChannelLayout(channelCount: 6, positions: [.left, .right, .center, .lfe, .sideLeft, .sideRight]).summary,
                       "L R C LFE Ls Rs", "5.1 written with side surrounds")
        XCTAssertEqual(ChannelLayout(channelCount: 8, positions: [.left, .right, .center, .lfe, .rearLeft, .rearRight, .sideLeft, .sideRight]).summary,
                       "L R C LFE Lrs Rrs Lss Rss", "7.1")
        XCTAssertEqual(ChannelLayout(channelCount: 3, positions: [.left, .left, .right]).names, ["L", "L2", "R"], "a repeat is told apart")
        XCTAssertNil(ChannelLayout(channelCount: 3, positions: [.left, .right]).positions, "a map that does not cover every channel is no map")
    }

    func testTheDownmixStatesEveryGain() {
        let surround = StereoDownmix(layout: ChannelLayout(channelCount: 6, positions: MultichannelImportTests.fiveOne))
        XCTAssertEqual(surround.rule, .bs775)
        let g = StereoDownmix.minus3dB
        XCTAssertEqual(surround.leftGains, [1, 0, g, 0, g, 0])
        XCTAssertEqual(surround.rightGains, [0, 1, g, 0, 0, g])
        XCTAssertEqual(surround.droppedChannels, ["LFE"])
        XCTAssertEqual(surround.description, "ITU-R BS.775: L = L + 0.707·C + 0.707·Ls, R = R + 0.707·C + 0.707·Rs; LFE dropped")
        XCTAssertEqual(Double(g), pow(10, -3.0103 / 20), accuracy: 1e-5)

        let unknown = StereoDownmix(layout: ChannelLayout(channelCount: 5, positions: nil))
        XCTAssertEqual(unknown.rule, .alternating)
        XCTAssertEqual(unknown.leftGains, [g, 0, g, 0, g])
        XCTAssertEqual(unknown.rightGains, [0, g, 0, g, 0])
        XCTAssertEqual(unknown.droppedChannels, [])
        XCTAssertEqual(unknown.description, "no channel layout in the file: channels 1 3 5 → L, 2 4 → R, each at −3 dB")

        let ambisonic = StereoDownmix(layout: ChannelLayout(channelCount: 4, positions: [.ambisonicW, .ambisonicX, .ambisonicY, .ambisonicZ]))
        XCTAssertEqual(ambisonic.rule, .alternating, "B-format has no speaker places")
        XCTAssertEqual(ambisonic.description, "no speaker layout (W X Y Z): channels 1 3 → L, 2 4 → R, each at −3 dB")
    }

    // MARK: - Import

    func testAFiveOneFileBecomesSixMonoFilesNamedByItsLayoutEachBitIdentical() throws {
        let folder = makeTempFolder(self)
        let audio = folder + "/audio", peaks = folder + "/peaks"
        mkdir(audio, 0o755)
        mkdir(peaks, 0o755)
        _ = try writeFiveOne(folder + "/surround.wav")
        let source = try readAll(folder + "/surround.wav").channels
        var fractions: [Double] = []
        let imported = try AudioImporter.importTracks(source: folder + "/surround.wav", destinationFolder: audio, peaksFolder: peaks,
                                                      sessionSampleRate: 48000) { fractions.append($0) }
        XCTAssertTrue(imported.isSplit)
        XCTAssertEqual(imported.files.map(\.fileName),
                       ["surround-L.wav", "surround-R.wav", "surround-C.wav", "surround-LFE.wav", "surround-Ls.wav", "surround-Rs.wav"])
        XCTAssertEqual(imported.files.map(\.channelName), ["L", "R", "C", "LFE", "Ls", "Rs"])
        XCTAssertEqual(imported.files.map(\.channelPan), [-1, 1, 0, 0, -1, 1])
        XCTAssertEqual(imported.channelText, "6 ch → 6 mono tracks: L R C LFE Ls Rs, panned by position")
        XCTAssertEqual(fractions.last, 1)
        XCTAssertEqual(folderContents(audio), imported.files.map(\.fileName).sorted(), "no temporary files left")
        for (k, file) in imported.files.enumerated() {
            XCTAssertEqual(file.channelCount, 1)
            XCTAssertEqual(file.encoding, .int24)
            XCTAssertEqual(file.frameCount, 48000)
            let (channels, reader) = try readAll(audio + "/" + file.fileName)
            XCTAssertEqual(reader.channelCount, 1)
            XCTAssertEqual(channels[0], source[k], "channel \(k + 1) (\(file.channelName ?? "")) copied exactly")
            XCTAssertEqual(frequencyByZeroCrossings(channels[0][1000..<47000], sampleRate: 48000), MultichannelImportTests.tones[k], accuracy: 0.5)
            let peakPath = peaks + "/" + PeakFile.fileName(forAudioFileName: file.fileName)
            XCTAssertFalse(PeakFile.isStale(peakPath: peakPath, sourcePath: audio + "/" + file.fileName))
            XCTAssertEqual(Double(try PeakFile.load(path: peakPath).minMax(channel: 0, fromFrame: 0, toFrame: 48000).max),
                           0.1 + 0.05 * Double(k), accuracy: 1e-3)
        }
    }

    func testAFileThatNamesNoPositionsSplitsIntoNumberedChannelsAndResamplesAligned() throws {
        let folder = makeTempFolder(self)
        _ = try writeFiveOne(folder + "/multi.wav", sampleRate: 44100, frames: 44100, positions: nil)
        let imported = try AudioImporter.importTracks(source: folder + "/multi.wav", destinationFolder: folder, sessionSampleRate: 48000)
        XCTAssertEqual(imported.files.map(\.fileName), (1...6).map { "multi-ch\($0).wav" })
        XCTAssertEqual(imported.files.map(\.channelName), ["1", "2", "3", "4", "5", "6"])
        XCTAssertEqual(imported.files.map(\.channelPan), [nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(imported.channelText, "6 ch → 6 mono tracks: 1 2 3 4 5 6, centred (the file names no channel positions)")
        XCTAssertTrue(imported.wasResampled)
        for (k, file) in imported.files.enumerated() {
            XCTAssertEqual(file.frameCount, 48000, "every channel the same length")
            let channel = try readAll(folder + "/" + file.fileName).channels[0]
            XCTAssertEqual(frequencyByZeroCrossings(channel[2000..<46000], sampleRate: 48000), MultichannelImportTests.tones[k], accuracy: 0.5)
            XCTAssertEqual(rms(channel[2000..<46000]), (0.1 + 0.05 * Double(k)) / 2.0.squareRoot(), accuracy: 0.002)
        }
    }

    func testMonoAndStereoFilesAreCopiedWhole() throws {
        let folder = makeTempFolder(self)
        try writeFile(folder + "/st.wav", format: AudioFileFormat(container: .wav, encoding: .int16, sampleRate: 48000, channelCount: 2),
                      channels: [sine(hertz: 440, sampleRate: 48000, frameCount: 4800), sine(hertz: 550, sampleRate: 48000, frameCount: 4800)])
        let imported = try AudioImporter.importTracks(source: folder + "/st.wav", destinationFolder: folder + "/", sessionSampleRate: 48000)
        XCTAssertFalse(imported.isSplit)
        XCTAssertEqual(imported.files.map(\.fileName), ["st-2.wav"])
        XCTAssertEqual(imported.files[0].channelCount, 2)
        XCTAssertNil(imported.files[0].channelName)
        XCTAssertEqual(imported.channelText, "2 ch")
    }

    /// A FLAC that loses sync half-way fails after every channel's file has been partly
    /// written: none of them, nor their peaks, is left.
    func testASplitThatFailsHalfwayLeavesNoFile() throws {
        let folder = makeTempFolder(self)
        let audio = folder + "/audio", peaks = folder + "/peaks"
        mkdir(audio, 0o755)
        mkdir(peaks, 0o755)
        let source = folder + "/damaged.flac"
        _ = try writeFiveOne(source, frames: 200_000, positions: nil, container: .flac, encoding: .int16)
        let size = Int(fileSize(source))
        var bytes = firstBytes(source, count: size)
        var noise = SeededNoise(seed: 9)
        for i in (size / 2)..<(size * 3 / 4) { bytes[i] = UInt8(truncatingIfNeeded: Int(noise.next() * 1000)) }
        writeBytes(bytes, to: source)
        var reached = 0.0
        XCTAssertThrowsError(try AudioImporter.importTracks(source: source, destinationFolder: audio, peaksFolder: peaks,
                                                            sessionSampleRate: 48000) { reached = $0 }) {
            XCTAssertTrue("\($0)".hasPrefix(source), "names the source: \($0)")
        }
        XCTAssertGreaterThan(reached, 0.25, "it failed half-way, not on opening")
        XCTAssertEqual(folderContents(audio), [])
        XCTAssertEqual(folderContents(peaks), [])
    }
}

import XCTest
@testable import TapedeckEngine
@testable import TapedeckDevices

final class RingTests: XCTestCase {
    func testFrameRingKeepsFramesInOrderAcrossTheWrap() {
        let ring = FrameRing(channelCount: 2, capacityFrames: 10)
        let a = UnsafeMutablePointer<Float>.allocate(capacity: 7), b = UnsafeMutablePointer<Float>.allocate(capacity: 7)
        let chans = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 2)
        chans[0] = a; chans[1] = b
        defer { a.deallocate(); b.deallocate(); chans.deallocate() }
        var next: Float = 0, expect: Float = 0
        for _ in 0..<20 {
            for i in 0..<7 { a[i] = next + Float(i); b[i] = -(next + Float(i)) }
            let pushed = ring.push(chans, frameCount: 7)
            next += Float(pushed)
            let popped = ring.pop(into: chans, frameCount: 5)
            for i in 0..<popped {
                XCTAssertEqual(a[i], expect + Float(i))
                XCTAssertEqual(b[i], -(expect + Float(i)))
            }
            expect += Float(popped)
        }
        XCTAssertLessThanOrEqual(ring.availableFrames, 10)
    }

    func testFullRingRefusesMoreAndQueueDropsWhenFull() {
        let ring = FrameRing(channelCount: 1, capacityFrames: 4)
        XCTAssertEqual(ring.push(nil, frameCount: 10), 4)
        XCTAssertEqual(ring.freeFrames, 0)
        let q = SPSCQueue<Int>(capacity: 2)
        XCTAssertTrue(q.push(1)); XCTAssertTrue(q.push(2)); XCTAssertFalse(q.push(3))
        XCTAssertEqual(q.pop(), 1); XCTAssertEqual(q.pop(), 2); XCTAssertNil(q.pop())
    }

    func testSampleConversionRoundTripsEveryIntegerFormat() {
        let n = 5
        let values: [Float] = [-1, -0.5, 0, 0.25, 32767.0 / 32768]
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: n)
        let chans = UnsafeMutablePointer<UnsafeMutablePointer<Float>>.allocate(capacity: 1)
        chans[0] = buf
        let raw = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 16)
        defer { buf.deallocate(); chans.deallocate(); raw.deallocate() }
        for format in DeviceSampleFormat.allCases {
            for i in 0..<n { buf[i] = values[i] }
            SampleConversion.fromFloat(chans, frameOffset: 0, format: format, channelCount: 1, frameCount: n, into: raw)
            buf.update(repeating: 9, count: n)
            SampleConversion.toFloat(raw, format: format, channelCount: 1, frameCount: n, into: chans, frameOffset: 0)
            for i in 0..<n { XCTAssertEqual(buf[i], values[i], "\(format)") }
        }
    }
}

final class DeviceErrorTests: XCTestCase {
    func testCommonALSAFailuresSayWhatToDo() {
        XCTAssertTrue(DeviceError.explain(-EBUSY).contains("another program is using it"))
        XCTAssertTrue(DeviceError.explain(-ENODEV).contains("unplugged"))
        XCTAssertTrue(DeviceError.explain(-ENOENT).contains("tapedeck devices"))
        XCTAssertFalse(DeviceError.isFatal(-EPIPE), "an xrun is recovered, not fatal")
        XCTAssertTrue(DeviceError.isFatal(-ENODEV))
        XCTAssertTrue(DeviceError.isFatal(-EBADFD))
    }
}

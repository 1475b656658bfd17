import Testing

@testable import SensorHub

/// DirCon byte for byte as the protocol's public description lays it out: a 6-byte header (version 1, message type,
/// sequence number, response code, data length big-endian), 128-bit UUIDs written as they read
/// (0000xxxx-0000-1000-8000-00805F9B34FB), characteristic properties read 0x01, write 0x02, notify 0x04. The bytes
/// below are written out by hand from that description, not from the code.
@Suite struct DirConTests {
    /// 00001826-0000-1000-8000-00805F9B34FB and its siblings, byte by byte.
    static func uuid(_ high: UInt8, _ low: UInt8) -> [UInt8] {
        [0x00, 0x00, high, low, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB]
    }
    static let fitnessMachine = uuid(0x18, 0x26)
    static let controlPoint = uuid(0x2A, 0xD9)
    static let indoorBikeData = uuid(0x2A, 0xD2)

    func session() -> DirConSession { DirConSession(services: HubService.hub(passingControl: true)) }

    @Test func discoverServicesListsTheFourServicesAs128BitUUIDs() throws {
        var reader = DirConReader()
        // Version 1, Discover Services (1), sequence 7, response 0, no data.
        let request = try #require(try reader.take([0x01, 0x01, 0x07, 0x00, 0x00, 0x00]).first)
        var session = session()
        let answer = session.answer(request).answer.encoded()
        let services = Self.uuid(0x18, 0x18) + Self.uuid(0x18, 0x16) + Self.uuid(0x18, 0x0D) + Self.fitnessMachine
        #expect(answer == [0x01, 0x01, 0x07, 0x00, 0x00, 64] + services)
    }

    @Test func theFitnessMachinesCharacteristicsWithTheirProperties() {
        var session = session()
        let answer = session.answer(DirConMessage(.discoverCharacteristics, sequence: 2, data: Self.fitnessMachine))
        // Feature (read), Indoor Bike Data (notify), Control Point (write and indicate: notify in DirCon), Status
        // (notify), Supported Power Range and Resistance Level Range (read): 16 + 6 × 17 = 118 bytes.
        let expected: [UInt8] =
            [0x01, 0x02, 0x02, 0x00, 0x00, 118] + Self.fitnessMachine
            + Self.uuid(0x2A, 0xCC) + [0x01] + Self.indoorBikeData + [0x04] + Self.controlPoint + [0x06]
            + Self.uuid(0x2A, 0xDA) + [0x04] + Self.uuid(0x2A, 0xD8) + [0x01] + Self.uuid(0x2A, 0xD6) + [0x01]
        #expect(
            session.answer(DirConMessage(.discoverCharacteristics, sequence: 2, data: Self.fitnessMachine))
                .answer.encoded() == expected)
        #expect(answer.written == nil)
    }

    @Test func aReadAnswersTheValueAndAWriteIsPassedOn() {
        var session = session()
        // Supported Resistance Level Range: 0 to 25.5 in steps of 0.1 (sint16, sint16, uint16; FTMS 4.14).
        let read = session.answer(DirConMessage(.readCharacteristic, sequence: 3, data: Self.uuid(0x2A, 0xD6)))
        #expect(
            read.answer.encoded() == [0x01, 0x03, 0x03, 0x00, 0x00, 22] + Self.uuid(0x2A, 0xD6) + [0, 0, 0xFF, 0, 1, 0])
        // Set Target Power 230 W (05 e6 00): answered with the UUID alone, the value passed on.
        let write = session.answer(
            DirConMessage(.writeCharacteristic, sequence: 4, data: Self.controlPoint + [0x05, 0xE6, 0x00]))
        #expect(write.answer.encoded() == [0x01, 0x04, 0x04, 0x00, 0x00, 16] + Self.controlPoint)
        #expect(write.written?.characteristic == 0x2AD9 && write.written?.value == [0x05, 0xE6, 0x00])
    }

    @Test func notificationsGoOnlyWhereTheyWereEnabled() {
        var session = session()
        #expect(session.notification(0x2AD2, [0x44, 0x02, 0xB4, 0x00]) == nil)
        let enable = session.answer(DirConMessage(.enableNotifications, sequence: 5, data: Self.indoorBikeData + [1]))
        #expect(enable.answer.encoded() == [0x01, 0x05, 0x05, 0x00, 0x00, 16] + Self.indoorBikeData)
        // Type 6, sequence 0, response 0, the UUID then the value.
        #expect(
            session.notification(0x2AD2, [0x44, 0x02, 0xB4, 0x00])?.encoded()
                == [0x01, 0x06, 0x00, 0x00, 0x00, 20] + Self.indoorBikeData + [0x44, 0x02, 0xB4, 0x00])
        _ = session.answer(DirConMessage(.enableNotifications, sequence: 6, data: Self.indoorBikeData + [0]))
        #expect(session.notification(0x2AD2, [0x44, 0x02, 0xB4, 0x00]) == nil)
    }

    /// What the real trainer declares reaches the next read of the Feature, notified or not.
    @Test func aDeclaredValueIsReadFromThenOn() {
        var session = session()
        _ = session.notification(0x2ACC, [0x02, 0x44, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00])
        let read = session.answer(DirConMessage(.readCharacteristic, sequence: 1, data: Self.uuid(0x2A, 0xCC)))
        #expect(read.answer.data.suffix(8) == [0x02, 0x44, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00])
    }

    /// Each refusal with the description's code, the request's type and sequence number, and the UUID asked for.
    @Test func refusalsCarryTheDescriptionsCodes() {
        var session = session()
        func code(_ message: DirConMessage) -> UInt8 { session.answer(message).answer.encoded()[3] }
        // 3: a service the hub does not have (Device Information, 0x180A).
        #expect(code(DirConMessage(.discoverCharacteristics, sequence: 1, data: Self.uuid(0x18, 0x0A))) == 3)
        // 4: a characteristic it does not have; a UUID outside the Bluetooth base.
        #expect(code(DirConMessage(.readCharacteristic, sequence: 1, data: Self.uuid(0x2A, 0x00))) == 4)
        #expect(code(DirConMessage(.readCharacteristic, sequence: 1, data: [UInt8](repeating: 0xAB, count: 16))) == 4)
        // 5: reading the control point, writing the Feature, notifications of a read-only characteristic.
        #expect(code(DirConMessage(.readCharacteristic, sequence: 1, data: Self.controlPoint)) == 5)
        #expect(code(DirConMessage(.writeCharacteristic, sequence: 1, data: Self.uuid(0x2A, 0xCC) + [0])) == 5)
        #expect(code(DirConMessage(.enableNotifications, sequence: 1, data: Self.uuid(0x2A, 0xD8) + [1])) == 5)
        // 1: a type the protocol does not have, and a notification sent to the server.
        #expect(code(DirConMessage(type: 9, sequence: 1)) == 1)
        #expect(code(DirConMessage(.notification, sequence: 0, data: Self.indoorBikeData)) == 1)
        // 2: a request too short to hold its UUID.
        #expect(code(DirConMessage(.readCharacteristic, sequence: 1, data: [0, 0])) == 2)
        #expect(session.answer(DirConMessage(type: 9, sequence: 42)).answer.encoded() == [0x01, 0x09, 42, 0x01, 0, 0])
    }

    /// A stream read however TCP cuts it; a length over the limit or another version closes it before any data is
    /// kept.
    @Test func theReaderTakesMessagesAcrossSegmentsAndRefusesWhatIsNotDirCon() throws {
        let bytes =
            DirConMessage(.writeCharacteristic, sequence: 9, data: Self.controlPoint + [0x00]).encoded()
            + DirConMessage(.discoverServices, sequence: 10).encoded()
        var reader = DirConReader()
        var messages: [DirConMessage] = []
        for byte in bytes { messages += try reader.take([byte]) }
        #expect(messages.map(\.sequence) == [9, 10])
        #expect(messages.first?.data == Self.controlPoint + [0x00])

        var long = DirConReader()
        #expect(throws: DirConError.self) { try long.take([0x01, 0x04, 0x01, 0x00, 0x02, 0x11]) }
        var other = DirConReader()
        #expect(throws: DirConError.self) { try other.take([0x02, 0x01, 0x01, 0x00, 0x00, 0x00]) }
    }
}

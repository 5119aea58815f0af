import Foundation
import JSON

/// The refresh limit (5 refreshes of a token in 30 s, issue 19.7) is counted in the store, in
/// each provider's account list (`<provider>+accounts.json`, member `refreshes`), by every agent
/// process together. The kill -9 loops refresh on purpose as fast as agents start, to test what a
/// crash leaves behind, not the limit: between rounds they forget the count, as if the window had
/// passed. Call it only while no agent runs on the store.
enum RefreshCount {
    static func forget(in store: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: store.path) where name.hasSuffix("+accounts.json") {
            let file = store.appendingPathComponent(name)
            guard var list = try JSONParser.parse([UInt8](Data(contentsOf: file))).objectValue, list["refreshes"] != nil else { continue }
            list["refreshes"] = nil
            try Data(JSONSerializer.bytes(.object(list))).write(to: file)
        }
    }
}

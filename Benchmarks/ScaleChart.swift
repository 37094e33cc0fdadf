import Foundation

/// The scale series as an SVG: four panels, each a cost against the rows stored (log scale),
/// one line per store; flat lines are the goal.
enum ScaleChart {
    private struct Panel {
        let title: String
        let unit: String
        /// The figure drawn solid, and the one drawn dashed (the 99th percentile), if any.
        let value: (ScalePoint) -> Double
        let tail: ((ScalePoint) -> Double)?
    }

    private static let colors = ["SQLite": "#1f6fb4", "PostgreSQL": "#d1495b"]
    private static let width = 1060.0
    private static let height = 790.0
    private static let panelWidth = 420.0
    private static let panelHeight = 240.0

    static func render(_ points: [ScalePoint], settings: ScaleSeries.Settings) -> String {
        let panels = [
            Panel(title: "Upload", unit: "µs per row", value: { 1e6 / $0.uploadRowsPerSecond }, tail: nil),
            Panel(title: "Incremental fetch (3 changes)", unit: "ms", value: { $0.fetch.p50 }, tail: { $0.fetch.p99 }),
            Panel(title: "Check-update", unit: "ms", value: { $0.check.p50 }, tail: { $0.check.p99 }),
            Panel(
                title: "First fetch of one account (\(ScaleTable.grouped(settings.firstFetchRows)) rows)", unit: "ms",
                value: { $0.firstFetch }, tail: nil),
        ]
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(width / 2)" y="30" text-anchor="middle" font-size="19" font-weight="bold">\
            Sync server cost against rows stored (\(ScaleTable.grouped(settings.accounts)) accounts)</text>

            """
        svg += legend(stores: orderedStores(points))
        for (index, panel) in panels.enumerated() {
            let left = 80 + Double(index % 2) * (panelWidth + 100)
            let top = 110 + Double(index / 2) * (panelHeight + 110)
            svg += draw(panel, points: points, left: left, top: top)
        }
        svg += """
            <text x="\(width / 2)" y="\(height - 18)" text-anchor="middle" fill="#555">\
            Lower is better; a flat line is a cost that does not grow with the store. \
            Solid: median; dashed: 99th percentile.</text>
            </svg>

            """
        return svg
    }

    private static func orderedStores(_ points: [ScalePoint]) -> [String] {
        var stores: [String] = []
        for point in points where !stores.contains(point.store) { stores.append(point.store) }
        return stores
    }

    private static func legend(stores: [String]) -> String {
        var svg = ""
        var x = width / 2 - Double(stores.count) * 80 - 60
        for store in stores {
            let color = colors[store] ?? "#333"
            svg += """
                <line x1="\(x)" y1="60" x2="\(x + 30)" y2="60" stroke="\(color)" stroke-width="3"/>
                <circle cx="\(x + 15)" cy="60" r="4" fill="\(color)"/>
                <text x="\(x + 38)" y="65">\(store)</text>

                """
            x += 160
        }
        svg += """
            <line x1="\(x)" y1="60" x2="\(x + 30)" y2="60" stroke="#555" stroke-width="2" stroke-dasharray="6 4"/>
            <text x="\(x + 38)" y="65">p99</text>

            """
        return svg
    }

    private static func draw(_ panel: Panel, points: [ScalePoint], left: Double, top: Double) -> String {
        let sizes = Set(points.map(\.rows)).sorted()
        guard let smallest = sizes.first, let largest = sizes.last else { return "" }
        let low = log10(Double(smallest)) - 0.25
        let high = log10(Double(largest)) + 0.25
        let values = points.flatMap { point in [panel.value(point)] + (panel.tail.map { [$0(point)] } ?? []) }
        let (ceiling, step) = niceScale(values.filter(\.isFinite).max() ?? 1)
        func x(_ rows: Int) -> Double { left + (log10(Double(rows)) - low) / (high - low) * panelWidth }
        func y(_ value: Double) -> Double { top + panelHeight - min(value, ceiling) / ceiling * panelHeight }

        var svg = """
            <text x="\(left)" y="\(top - 14)" font-size="15" font-weight="bold">\(panel.title)\
            <tspan font-weight="normal" fill="#555"> — \(panel.unit)</tspan></text>
            <rect x="\(left)" y="\(top)" width="\(panelWidth)" height="\(panelHeight)" fill="none" stroke="#999"/>

            """
        var tick = 0.0
        while tick <= ceiling + step / 2 {
            let ty = y(tick)
            svg += """
                <line x1="\(left)" y1="\(ty)" x2="\(left + panelWidth)" y2="\(ty)" stroke="#e4e4e4"/>
                <text x="\(left - 8)" y="\(ty + 4)" text-anchor="end" fill="#333">\(label(tick, step: step))</text>

                """
            tick += step
        }
        var decade = pow(10, floor(low))
        while log10(decade) <= high {
            if log10(decade) >= low {
                let tx = x(Int(decade))
                svg += """
                    <line x1="\(tx)" y1="\(top)" x2="\(tx)" y2="\(top + panelHeight)" stroke="#e4e4e4"/>
                    <text x="\(tx)" y="\(top + panelHeight + 18)" text-anchor="middle" fill="#333">\
                    \(rowsLabel(decade))</text>

                    """
            }
            decade *= 10
        }
        svg += """
            <text x="\(left + panelWidth / 2)" y="\(top + panelHeight + 38)" text-anchor="middle" fill="#555">\
            rows stored (log scale)</text>

            """
        for store in orderedStores(points) {
            let color = colors[store] ?? "#333"
            let series = points.filter { $0.store == store }
            if let tail = panel.tail {
                svg += polyline(series.map { (x($0.rows), y(tail($0))) }, color: color, dashed: true)
            }
            let line = series.map { (x($0.rows), y(panel.value($0))) }
            svg += polyline(line, color: color, dashed: false)
            for (cx, cy) in line {
                svg += "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"4\" fill=\"\(color)\"/>\n"
            }
        }
        return svg
    }

    private static func polyline(_ points: [(Double, Double)], color: String, dashed: Bool) -> String {
        let coordinates = points.map { String(format: "%.1f,%.1f", $0.0, $0.1) }.joined(separator: " ")
        return "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(color)\" "
            + (dashed ? "stroke-width=\"2\" stroke-dasharray=\"6 4\" opacity=\"0.8\"/>\n" : "stroke-width=\"3\"/>\n")
    }

    /// A round top for the y axis above `maximum` and a step of 1, 2 or 5 × 10ⁿ giving 4 to 8 gridlines.
    private static func niceScale(_ maximum: Double) -> (ceiling: Double, step: Double) {
        let target = max(maximum * 1.1, 1e-3)
        let magnitude = pow(10, floor(log10(target / 5)))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { target / $0 <= 8 } ?? 10 * magnitude
        return (ceil(target / step) * step, step)
    }

    private static func label(_ value: Double, step: Double) -> String {
        step >= 1
            ? String(format: "%.0f", value)
            : step >= 0.1 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }

    private static func rowsLabel(_ rows: Double) -> String {
        rows >= 1e6
            ? String(format: "%.0fM", rows / 1e6)
            : rows >= 1e3 ? String(format: "%.0fk", rows / 1e3) : String(format: "%.0f", rows)
    }
}

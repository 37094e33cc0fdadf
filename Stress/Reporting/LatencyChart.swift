import Foundation

/// Latency over time as a hand-written SVG scatter plot: one dot per write or sync (sampled
/// when there are many; the highlighted ones, such as writes held by the upgrade, are always
/// drawn), a logarithmic latency axis, the upgrade's window shaded, and events (kills,
/// restarts) marked by vertical lines.
struct LatencyChart: Sendable {
    struct Point: Sendable {
        /// Seconds since the load started, when the write was submitted.
        let time: Double
        let latencyMs: Double
        /// Submitted while the upgrade ran, so it waited for it.
        let heldByUpgrade: Bool
    }

    let title: String
    let points: [Point]
    /// Seconds since the load started; no shading when `nil`.
    var upgradeStart: Double?
    var upgradeEnd: Double?
    /// Events drawn as vertical lines.
    var markers: [Marker] = []
    /// What a point measures, for the axis and the legend.
    var measure = "write"
    /// The legend of the highlighted points.
    var highlightLabel = "write submitted during the upgrade"

    /// An event at one moment, drawn as a vertical line in its colour.
    struct Marker: Sendable {
        /// Seconds since the load started.
        let time: Double
        /// The legend's label, one entry per distinct label.
        let label: String
        let color: String
    }

    private static let width = 960.0
    private static let height = 470.0
    private static let left = 80.0
    private static let right = 930.0
    private static let top = 50.0
    private static let bottom = 380.0
    private static let maximumPoints = 8_000

    func render() -> String {
        let timeMax = max(points.map(\.time).max() ?? 1, upgradeEnd ?? 0, markers.map(\.time).max() ?? 0, 0.001)
        let latencies = points.map(\.latencyMs).filter { $0 > 0 }
        let lowDecade = max(-3, Int(floor(log10(latencies.min() ?? 0.01))))
        let highDecade = max(lowDecade + 1, Int(ceil(log10(latencies.max() ?? 1))))
        func x(_ time: Double) -> Double { Self.left + (Self.right - Self.left) * time / timeMax }
        func y(_ latency: Double) -> Double {
            let position =
                (log10(max(latency, pow(10, Double(lowDecade)))) - Double(lowDecade))
                / Double(highDecade - lowDecade)
            return Self.bottom - (Self.bottom - Self.top) * position
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(Self.width))" height="\(Int(Self.height))" \
            viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Self.left)" y="24" font-size="15">\(escaped(title))</text>

            """
        // The upgrade window, under everything else.
        if let upgradeStart, let upgradeEnd {
            let shadeStart = x(upgradeStart)
            let shadeWidth = max(x(upgradeEnd) - shadeStart, 1)
            svg += rect(shadeStart, Self.top, shadeWidth, Self.bottom - Self.top, fill: "#f6c667", opacity: 0.45)
            let upgradeLabel = "upgrade \(Statistics.milliseconds(upgradeEnd - upgradeStart)) ms"
            svg += text(shadeStart + 4, Self.top + 14, upgradeLabel, fill: "#8a5a00")
        }
        for marker in markers {
            svg += line(x(marker.time), Self.top, x(marker.time), Self.bottom, stroke: marker.color)
        }
        // Axes and grid: one line per decade of latency, about ten time ticks.
        for decade in lowDecade...highDecade {
            let value = pow(10, Double(decade))
            svg += line(Self.left, y(value), Self.right, y(value), stroke: "#dddddd")
            svg += text(Self.left - 8, y(value) + 4, "\(formatted(value)) ms", anchor: "end")
        }
        let step = niceStep(timeMax / 10)
        for tick in stride(from: 0.0, through: timeMax, by: step) {
            svg += line(x(tick), Self.bottom, x(tick), Self.bottom + 5, stroke: "#333333")
            svg += text(x(tick), Self.bottom + 19, "\(formatted(tick)) s", anchor: "middle")
        }
        svg += line(Self.left, Self.bottom, Self.right, Self.bottom, stroke: "#333333")
        svg += line(Self.left, Self.top, Self.left, Self.bottom, stroke: "#333333")
        svg += text((Self.left + Self.right) / 2, Self.bottom + 40, "time since the load started", anchor: "middle")
        svg += "<text transform=\"translate(18 \((Self.top + Self.bottom) / 2)) rotate(-90)\" "
        svg += "text-anchor=\"middle\">\(escaped(measure)) latency (log scale)</text>\n"
        // The dots: every held write, and an even sample of the others.
        let held = points.filter(\.heldByUpgrade)
        let others = points.filter { !$0.heldByUpgrade }
        let stride = max(1, others.count / max(1, Self.maximumPoints - held.count))
        for (index, point) in others.enumerated() where index % stride == 0 {
            svg += dot(x(point.time), y(point.latencyMs), fill: "#3b6ea8")
        }
        for point in held {
            svg += dot(x(point.time), y(point.latencyMs), fill: "#d1495b", radius: 3)
        }
        // Legend.
        let legendY = Self.height - 12
        svg += dot(Self.left, legendY - 4, fill: "#3b6ea8")
        let sampled = stride > 1 ? " (1 in \(stride) drawn)" : ""
        svg += text(Self.left + 8, legendY, "\(measure)\(sampled)")
        svg += dot(Self.left + 220, legendY - 4, fill: "#d1495b", radius: 3)
        svg += text(Self.left + 228, legendY, "\(highlightLabel) (\(held.count))")
        var legendX = Self.left + 560
        if upgradeStart != nil {
            svg += rect(legendX, legendY - 10, 14, 10, fill: "#f6c667", opacity: 0.45)
            svg += text(legendX + 20, legendY, "upgrade window")
            legendX += 130
        }
        var labelled = Set<String>()
        for marker in markers where labelled.insert(marker.label).inserted {
            svg += line(legendX, legendY - 10, legendX, legendY, stroke: marker.color)
            svg += text(legendX + 6, legendY, marker.label)
            legendX += 150
        }
        return svg + "</svg>\n"
    }

    private func niceStep(_ raw: Double) -> Double {
        let magnitude = pow(10, floor(log10(max(raw, 1e-6))))
        for factor in [1.0, 2.0, 5.0] where raw <= factor * magnitude { return factor * magnitude }
        return 10 * magnitude
    }

    private func formatted(_ value: Double) -> String {
        value >= 1 ? String(format: "%g", value) : String(format: "%.3g", value)
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    private func number(_ value: Double) -> String { String(format: "%.1f", value) }

    private func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String, opacity: Double)
        -> String
    {
        "<rect x=\"\(number(x))\" y=\"\(number(y))\" width=\"\(number(width))\" height=\"\(number(height))\" "
            + "fill=\"\(fill)\" fill-opacity=\"\(opacity)\"/>\n"
    }

    private func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String) -> String {
        "<line x1=\"\(number(x1))\" y1=\"\(number(y1))\" x2=\"\(number(x2))\" y2=\"\(number(y2))\" "
            + "stroke=\"\(stroke)\"/>\n"
    }

    private func text(_ x: Double, _ y: Double, _ content: String, anchor: String = "start", fill: String = "#333333")
        -> String
    {
        "<text x=\"\(number(x))\" y=\"\(number(y))\" text-anchor=\"\(anchor)\" fill=\"\(fill)\">"
            + "\(escaped(content))</text>\n"
    }

    private func dot(_ x: Double, _ y: Double, fill: String, radius: Double = 1.6) -> String {
        "<circle cx=\"\(number(x))\" cy=\"\(number(y))\" r=\"\(radius)\" fill=\"\(fill)\" fill-opacity=\"0.6\"/>\n"
    }
}

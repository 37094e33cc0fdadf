@main
struct Stress {
    static func main() {}
}

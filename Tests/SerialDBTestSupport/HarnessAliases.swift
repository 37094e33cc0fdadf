@_exported import HarnessSupport

/// The tests' name for a ``ScratchDirectory``: a fresh directory removed on deinit.
public typealias TemporaryDirectory = ScratchDirectory

/// The tests' name for ``SeededRandom``, so a failing randomized test can be replayed from its seed.
public typealias SeededGenerator = SeededRandom

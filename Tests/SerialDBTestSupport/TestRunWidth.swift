import CTestRunWidth

/// The most test cases Swift Testing runs at once in the test process: twice the cores unless
/// the environment set `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH` (`Tests/CTestRunWidth`
/// says why there is a cap); 0 when nothing set it.
public var testRunWidth: Int { Int(serialdb_test_run_width()) }

"""The sandbox: model-written code run against a test suite, apart from this machine
(``run.Sandbox``). Its isolation levels (``isolation``), the cgroup box that bounds a run's
processes (``box``), their uids and their ends (``processes``, ``leftovers``), the programs
it starts (``suite_runner``, which runs the suite ``suite_code`` compiled, and
``candidate_worker``, which ``confine`` confines, the two speaking ``plain_data`` through
``remote``), its limits (``limits``), what the processes print (``output``) and the result
read back (``suite_result``). It reads no answers and imports no grader:
``loopbench.graders.code_tests`` grades with it.

Internal: may change between releases. The public API is the ``loopbench`` package."""

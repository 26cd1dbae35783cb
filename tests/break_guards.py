"""Break each guard once and see which tests notice (seed 001: a guard nobody has broken
is a guard nobody has tested). Each mutation is applied to the source, the tests named
beside it are run, and the source is restored. Every line must say "caught by".

    .venv/bin/python tests/break_guards.py [NAME-SUBSTRING]
"""

import subprocess
import sys
from pathlib import Path

P = "harness/patterns/"
T = "tests/harness/patterns/"
LIMITS = [T + "test_limits.py", T + "test_budgets.py"]
CODE = T + "test_coding.py"
GRADER = "tests/graders/test_code_tests.py"
R, S = "graders/suite_runner.py", "graders/sandbox.py"
SB = "tests/graders/test_sandbox.py::"

# (guard, file, text, broken text, tests that must catch it)
MUTATIONS = [
    # The run limits, enforced once for every pattern.
    ("call-floor refusal", P + "limits.py", "if self.options.max_steps < floor.calls:",
     "if False:", LIMITS),
    ("step ceiling", P + "limits.py", "if self._counted.calls >= opts.max_steps:",
     "if False:", LIMITS),
    ("token ceiling (also reflection's, between cycles)", P + "limits.py",
     "if self._counted.tokens_used >= opts.max_tokens:", "if False:", LIMITS),
    ("completion limit", P + "limits.py", "if opts.max_output_tokens is not None:",
     "if False:", LIMITS),
    # Budget refusals (call floors).
    ("plan refusal", P + "plan.py", 'return CallFloor(2, "one call to plan and one to act")',
     'return CallFloor(1, "one call to plan and one to act")', [T + "test_plan.py"]),
    ("rewoo refusal", P + "rewoo.py", 'return CallFloor(2, "one call to plan and one to answer")',
     'return CallFloor(1, "one call to plan and one to answer")', [T + "test_rewoo.py"]),
    ("plan_execute and goal_decomposition refusal", P + "executor.py",
     "PLANNED_FLOOR = CallFloor(3,", "PLANNED_FLOOR = CallFloor(0,",
     [T + "test_plan_execute.py", T + "test_goal_decomposition.py"]),
    ("reflection refusal", P + "reflection.py", "return CallFloor(2 * cycles + 1,",
     "return CallFloor(1,", [T + "test_reflection.py"]),
    ("best_of_n refusal", P + "best_of_n.py", 'return CallFloor(2, "a candidate and its verdict")',
     'return CallFloor(0, "a candidate and its verdict")', [T + "test_budgets.py"]),
    ("reflexion and the one-call patterns' refusal", P + "base.py",
     'ONE_CALL = CallFloor(1, "at least one model call")',
     'ONE_CALL = CallFloor(0, "at least one model call")', LIMITS),
    ("self_consistency refusal", P + "self_consistency.py",
     'return CallFloor(self.options.samples, "one call per sample")',
     'return CallFloor(1, "one call per sample")', [T + "test_budgets.py"]),
    # Budget reservations.
    ("reflection reserves its cycles", P + "reflection.py",
     "generation_steps = opts.max_steps - 2 * opts.cycles", "generation_steps = opts.max_steps",
     [T + "test_reflection.py", T + "test_budgets.py"]),
    ("executor reserves the final call", P + "executor.py",
     "budget = min(step_budget, ctx.calls_left(options) - 1)",
     "budget = min(step_budget, ctx.calls_left(options))",
     [T + "test_plan_execute.py", T + "test_goal_decomposition.py"]),
    ("replan and phase planning leave a step and the answer", P + "executor.py",
     "return ctx.calls_left(options) >= 1 + AFTER_PLANNING", "return True",
     [T + "test_plan_execute.py", T + "test_goal_decomposition.py"]),
    ("best_of_n reserves the verdict", P + "best_of_n.py",
     'verdict_calls = int(opts.verifier == "model")', "verdict_calls = 0", [T + "test_checks.py"]),
    ("reflexion's attempts share max_steps", P + "reflexion.py",
     "budget = min(opts.attempt_steps, ctx.calls_left(opts))", "budget = opts.attempt_steps",
     [T + "test_checks.py"]),
    ("tot reserves the answer (per node)", P + "tot.py",
     "                if ctx.calls_left(opts) < CALLS_PER_CHILD + 1:\n                    break\n",
     "                if False:\n                    break\n", [T + "test_search.py"]),
    ("tot reserves the answer (per proposal)", P + "tot.py",
     "            if ctx.calls_left(opts) < CALLS_PER_CHILD + 1:\n                break  # the",
     "            if False:\n                break  # the", [T + "test_search.py"]),
    # Truncation checks.
    ("truncation: tool loop", P + "tool_loop.py", "if response.truncated:", "if False:",
     [T + "test_react.py", T + "test_plan.py"]),
    ("truncation: plan", P + "plan.py", "if response.truncated:", "if False:",
     [T + "test_plan.py"]),
    ("truncation: final answers (rewoo, reflection's rewrite, executor)", P + "base.py",
     "    if response.truncated:\n        error = ",
     "    if False:\n        error = ",
     [T + "test_rewoo.py", T + "test_reflection.py"]),
    ("truncation: structured outputs", P + "structured.py", "if response.truncated:",
     "if False:", [T + "test_reflection.py", T + "test_rewoo.py", T + "test_checks.py"]),
    ("truncation: tot proposals", P + "tot.py", "if response.truncated or not proposal:",
     "if not proposal:", [T + "test_search.py"]),
    ("empty reply is not an answer", P + "base.py", "    if not answer:\n", "    if False:\n",
     ["tests/harness/test_runner.py"]),
    # Vote rules and checks.
    ("self_consistency votes on the typed answer", P + "self_consistency.py",
     "if same_answer(g.reading, reading)", "if g.answers[0] == answer", [T + "test_search.py"]),
    ("self_consistency votes on entities too", P + "self_consistency.py",
     "    if not names or not other_names:", "    if True:", [T + "test_search.py"]),
    ("self_consistency takes the plurality", P + "self_consistency.py",
     "best = max(groups, key=lambda g: len(g.answers))", "best = groups[0]",
     [T + "test_search.py"]),
    ("reflexion: an unfinished retry leaves the last answer", P + "reflexion.py",
     "                if answered is None:\n                    return outcome",
     "                if True:\n                    return outcome", [T + "test_checks.py"]),
    ("best_of_n: none accepted is not an answer", P + "best_of_n.py", "if answered:",
     "if False:", [T + "test_checks.py", T + "test_budgets.py"]),
    ("tot: an unscored child is not kept", P + "tot.py",
     "            if score is None:\n                search.unscored += 1\n"
     "                continue\n",
     "            if score is None:\n                score = 0.0\n", [T + "test_search.py"]),
    # Refusals and the guard.
    ("rewoo: a reference to a failed step", P + "rewoo.py", "if n in failed:", "if False:",
     [T + "test_rewoo.py"]),
    ("rewoo: a reference to a step not run", P + "rewoo.py", "if n not in outputs:",
     "if False:", [T + "test_rewoo.py"]),
    ("rewoo: a failed tool step is failed", P + "rewoo.py", "if result.ok and not result.guarded:",
     "if True:", [T + "test_rewoo.py"]),
    ("rewoo: the guard's warning is not an output", P + "rewoo.py",
     "if result.ok and not result.guarded:", "if result.ok:", [T + "test_rewoo.py"]),
    ("resume refuses other resolved options", "harness/runner.py", "        if differs:\n",
     "        if False:\n", ["tests/harness/test_records.py"]),
    ("compare matches a configuration written out", "harness/report/compare.py",
     "        if twin is not None and twin not in matched.values():",
     "        if False:", ["tests/harness/test_records.py"]),
    ("plan_execute: a reused id is a new step", P + "plan_execute.py",
     "failed -= {s.id for s in revised}", "pass", [T + "test_plan_execute.py"]),
    ("goal_decomposition plans an empty phase", P + "goal_decomposition.py", "if not tasks:",
     "if False:", [T + "test_goal_decomposition.py"]),
    ("reflection traces its draft", P + "reflection.py", 'ctx.answer_given("draft", answer)',
     "pass", [T + "test_reflection.py"]),
    ("guard counts failed repeats", P + "acting.py",
     "key = (name, result.args_key or _as_written(arguments))",
     "key = (name, result.args_key or str(object()))", [T + "test_guard.py"]),
    ("clone before append (tool loop)", P + "tool_loop.py", "messages=tuple(messages),",
     "messages=messages,  # type: ignore[arg-type]", [T + "test_react.py"]),
    ("clone before append (react_text)", P + "react_text.py", "messages=(*EXAMPLE, *messages),",
     "messages=messages,  # type: ignore[arg-type]", [T + "test_react_text.py"]),
    # Records and results folders.
    ("schema-1 arms map to identities", "harness/legacy.py",
     'upgraded["arm"] = schema_1_identity(arm)', "pass", ["tests/harness/test_records.py"]),
    ("answer keys that would grade wrong", "tasks/taskset.py",
     "numbers: list[FiniteFloat]", "numbers: list[float]", ["tests/tasks/test_taskset.py"]),
    ("a run recorded twice", "harness/store.py", "if key in current:", "if False:",
     ["tests/harness/test_store.py"]),
    ("a changed task set", "harness/store.py", "    if differs:\n", "    if False:\n",
     ["tests/harness/test_store.py"]),
    ("one writer", "harness/store.py", "fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)",
     "pass", ["tests/harness/test_store.py"]),
    ("a superseding record must name the one it replaces", "harness/store.py",
     "if record.supersedes != earlier.run_id:", "if False:", ["tests/harness/test_store.py"]),
    ("an orphan trace line is dropped", "harness/store.py",
     "        if f'\"run_id\":\"{run_id}\"'.encode() in recorded:\n            break\n",
     "        break\n", ["tests/harness/test_store.py"]),
    ("a long text is cut in the trace", "harness/trace.py", "    if len(text) <= max_text:",
     "    if True:", ["tests/harness/test_store.py"]),
    # The HTTP client, the response cache and the throttle.
    ("missing usage is not zero", "harness/models/wire.py",
     "return Usage(missing=1)", "return Usage()",
     ["tests/harness/models/test_openai_compat.py", "tests/harness/test_runner.py"]),
    ("--timeout bounds the whole request", "harness/models/openai_compat.py",
     "await asyncio.wait_for(self._post(body), self._timeout_s)", "await self._post(body)",
     ["tests/harness/models/test_openai_compat.py"]),
    ("a Retry-After beyond the cap stops the call", "harness/models/openai_compat.py",
     "if retry_after is not None and retry_after > self._retry.max_delay_s:", "if False:",
     ["tests/harness/models/test_openai_compat.py"]),
    ("the cache keeps identical requests of one run apart", "harness/models/cache.py",
     "occurrence = self._sent[first]", "occurrence = 0",
     ["tests/harness/models/test_cache.py"]),
    ("the cache keeps arms and repeats apart", "harness/models/cache.py", '"scope": scope,',
     '"scope": "",', ["tests/harness/models/test_cache.py"]),
    ("partial usage is unknown, not zero", "harness/models/wire.py",
     "    if prompt is None or completion is None:\n", "    if False:\n",
     ["tests/harness/models/test_openai_compat.py"]),
    ("an unusable reply's usage is counted", "harness/models/counting.py",
     "self.usage = self.usage + exc.usage", "pass",
     ["tests/harness/models/test_openai_compat.py"]),
    ("nan refused where it would disable a check", "harness/cli/errors.py",
     "if not math.isfinite(number):", "if False:", ["tests/harness/test_store.py"]),
    ("superseded runs stay in cost", "harness/report/table.py", "total_cost += float(",
     "total_cost += 0 * float(", ["tests/harness/report/test_table.py"]),
    ("--price-as is checked before running", "harness/cli/run.py",
     "price_table.require(price_as)  # before", "pass  # before",
     ["tests/harness/test_store.py"]),
    ("AIMD cuts on a 429", "harness/models/throttle.py",
     "self.limit = max(float(self.floor), self.limit / 2)", "pass",
     ["tests/harness/models/test_throttle.py"]),
    ("AIMD counts a burst once", "harness/models/throttle.py",
     "if started <= self._last_cut:", "if False:", ["tests/harness/models/test_throttle.py"]),
    ("AIMD never exceeds the limit in flight", "harness/models/throttle.py",
     "self.in_flight < int(self.limit)", "True", ["tests/harness/models/test_throttle.py"]),
    # Coding tasks: the checks a repair loop runs, grading, and the paired design.
    ("reflexion refuses a check that does not fit the task set", P + "reflexion.py",
     'if (opts.check == "evidence") != (ctx.code is None):', "if False:", [CODE]),
    ("self_tests need a call for the tests", P + "reflexion.py",
     'return CallFloor(2, "one call for the tests, one for the code")',
     'return CallFloor(1, "one call for the tests, one for the code")', [CODE]),
    ("the feedback loop stops once its check passes", P + "reflexion.py",
     "if passed or attempt == opts.attempts", "if attempt == opts.attempts", [CODE]),
    ("the feedback loop's retries fit max_steps", P + "reflexion.py",
     "or ctx.calls_left(opts) < 1:", "or False:", [CODE]),
    ("a run is graded on the held-out suite", "graders/code_tests.py",
     "result = await self.run(answer, heldout(suites))",
     "result = await self.run(answer, feedback(suites))", [GRADER]),
    ("suite results are kept by code and suite", "graders/code_tests.py",
     "parts = (code, suite.name, suite.source, suite.entry_point, suite.preamble)",
     "parts = (code,)", [GRADER]),
    ("a comment is not an edit", "harness/grading.py",
     "return ast.dump(ast.parse(code))", "return code", [GRADER]),
    ("false accepts need a check", "harness/report/checks.py",
     "judged = total(\"judged\") > 0", "judged = True", ["tests/harness/test_coding_runs.py"]),
    ("paired calls stay within a repeat", "harness/runner.py",
     'f"{job.task.id}#{job.repeat}"', 'f"{job.task.id}"', ["tests/harness/test_paired.py"]),
    ("a failed shared call leaves each arm its own", "harness/models/shared.py",
     "return await inner.complete(request)", "raise", ["tests/harness/models/test_shared.py"]),
    ("an unfinished review leaves the last code", P + "reflection.py",
     "if ctx.code is None:\n            return unfinished",
     "if True:\n            return unfinished", [CODE]),
    ("the model's own checks in a loop are tests", P + "coding.py",
     "        elif _checks(node):", "        elif False:", [CODE]),
    ("a failing grader is recorded, not raised", "harness/runner.py",
     "except Exception as exc:  # the grader failed",
     "except ZeroDivisionError as exc:  # the grader failed",
     ["tests/harness/test_paired.py"]),
    ("a coding set's suites are checked when it loads", "tasks/taskset.py",
     "if not _test_names(_parsed(where / name, source)):", "if False:",
     ["tests/tasks/test_taskset.py"]),
    # The sandbox model-written code runs in.
    ("audit hook: paths outside the work directory", R, "        if event in PATH_EVENTS:",
     "        if False:", [SB + "test_cannot_read_a_secret_outside_the_sandbox",
                           SB + "test_cannot_read_the_harness_source"]),
    ("audit hook: fork", R, '"os.system", "os.exec", "os.fork",', '"os.system", "os.exec",',
     [SB + "test_fork_bomb_is_refused"]),
    ("audit hook: sockets", R, '"signal.pthread_kill", "socket.",', '"signal.pthread_kill",',
     [SB + "test_socket_cannot_reach_a_listener_on_this_machine"]),
    ("root drops to an unprivileged uid", R,
     'if os.getuid() == 0 and job["uid"] is not None:', "if False:",
     [SB + "test_runs_unprivileged_when_started_as_root"]),
    ("memory limit", R, "resource.setrlimit(resource.RLIMIT_AS, (memory, memory))", "pass",
     [SB + "test_huge_allocation_is_killed"]),
    ("memory exhaustion is killed", R, "    except MemoryError:\n        run.end(",
     "    except ZeroDivisionError:\n        run.end(", [SB + "test_huge_allocation_is_killed"]),
    ("CPU limit", R, "resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))", "pass",
     [SB + "test_cpu_limit_kills"]),
    ("output cap", R, "if len(data) > self.budget[0]:", "if False:",
     [SB + "test_output_flood_is_capped"]),
    ("an == assert reports both values", R,
     "        if isinstance(test, ast.Compare) and len(test.ops) == 1 and "
     "isinstance(test.ops[0], ast.Eq):\n            args",
     "        if False:\n            args",
     [SB + "test_equality_failure_reports_source_expected_and_actual"]),
    ("raises accepts its own type only", R,
     "        if isinstance(exc, self.expected):\n            return True",
     "        if False:\n            return True",
     [SB + "test_raises_passes_on_the_named_type_only"]),
    ("HumanEval's check is a test", R, ' or [n for n in names if n == "check"]', "",
     [SB + "test_check_is_the_single_test_when_there_is_no_test_function"]),
    ("the candidate compiles apart from the preamble", R,
     'code = compile(job["code"], CANDIDATE_FILE,',
     'code = compile(job["preamble"] + "\\n" + job["code"], CANDIDATE_FILE,',
     [SB + "test_syntax_error_names_the_line_of_the_code_not_the_preamble"]),
    ("no key reaches the candidate", S, "                env=_env(home),",
     "                env=None,", [SB + "test_parent_environment_never_reaches_the_candidate"]),
    ("a timeout kills the whole group", S, "os.killpg(proc.pid, signal.SIGKILL)",
     "os.kill(proc.pid, signal.SIGKILL)", [SB + "test_fork_bomb_past_the_audit_hook_is_contained"]),
    ("the grading pool is bounded", S, "async with self._slots[1]:", "if True:",
     [SB + "test_workers_bound_the_runs_in_flight"]),
    ("a cut-short run names its test", S,
     'failures.append(Failure(running[-1], "", "", cut_short))', "pass",
     [SB + "test_timeout_names_the_test_that_was_running"]),
    ("bubblewrap shows none of this machine", S, 'argv += ["--ro-bind", "/usr", "/usr",',
     'argv += ["--ro-bind", "/etc", "/etc", "--ro-bind", "/usr", "/usr",',
     [SB + "test_bwrap_hides_this_machine_even_from_stat"]),
]  # fmt: skip


def main() -> None:
    wanted = sys.argv[1] if len(sys.argv) > 1 else ""
    missed = 0
    for name, path, old, new, tests in MUTATIONS:
        if wanted not in name:
            continue
        source = Path(path).read_text()
        assert source.count(old) >= 1, (name, old)
        Path(path).write_text(source.replace(old, new, 1))
        try:
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                capture_output=True,
                text=True,
            )
        finally:
            Path(path).write_text(source)
        failed = sorted(
            {
                line.split("::", 1)[-1].split(" ")[0]
                for line in run.stdout.splitlines()
                if line.startswith(("FAILED", "ERROR"))
            }
        )
        missed += not failed
        print(f"{name}: {'caught by ' + ', '.join(failed) if failed else 'NOT CAUGHT'}")
    raise SystemExit(1 if missed else 0)


if __name__ == "__main__":
    main()

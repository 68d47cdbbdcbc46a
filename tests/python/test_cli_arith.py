"""`tessel simplify`, `tessel prove` and `tessel bound`: the analyzer from the command line."""

import subprocess


def run(cli, *args):
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_help_lists_the_analyzer_commands(cli):
    r = run(cli, "--help")
    assert r.returncode == 0
    for name in ("simplify", "prove", "bound"):
        assert name in r.stdout


def test_command_help(cli):
    for name in ("simplify", "prove", "bound"):
        r = run(cli, name, "--help")
        assert r.returncode == 0 and f"usage: tessel {name}" in r.stdout and "--bind" in r.stdout


def test_simplify_folds_with_bindings(cli):
    r = run(cli, "simplify", "x // 16 + 3", "--bind", "x=0:16")
    assert r.returncode == 0 and r.stdout == "3\n", r.stderr
    r = run(cli, "simplify", "2 * 3 + 4")
    assert r.returncode == 0 and r.stdout == "10\n"


def test_simplify_keeps_what_it_cannot_simplify(cli):
    r = run(cli, "simplify", "x * y")
    assert r.returncode == 0 and r.stdout == "x * y\n"


def test_positional_words_are_joined(cli):
    r = run(cli, "simplify", "1", "+", "2")
    assert r.returncode == 0 and r.stdout == "3\n"


def test_bind_to_a_value(cli):
    r = run(cli, "simplify", "x * 4 + 1", "--bind", "x=5")
    assert r.returncode == 0 and r.stdout == "21\n"
    r = run(cli, "bound", "n + 1", "--var", "n:int64", "--bind=n=7")
    assert r.returncode == 0 and r.stdout == "[8, 8]\n", r.stderr


def test_prove(cli):
    r = run(cli, "prove", "i * 4 + j < 64", "--bind", "i=0:16", "--bind", "j=0:4")
    assert r.returncode == 0 and r.stdout == "proved\n"
    r = run(cli, "prove", "i * 4 + j < 63", "--bind", "i=0:16", "--bind", "j=0:4")
    assert r.returncode == 1 and r.stdout.startswith("not proved")


def test_prove_is_sound_under_wraparound(cli):
    r = run(cli, "prove", "x + 1 > x")
    assert r.returncode == 1 and r.stdout.startswith("not proved")


def test_prove_with_assumptions(cli):
    r = run(cli, "prove", "x < 10", "--assume", "x < 5")
    assert r.returncode == 0 and r.stdout == "proved\n"
    r = run(cli, "prove", "x < 3", "--assume", "x < 5")
    assert r.returncode == 1


def test_prove_symbolic_bind_and_strength(cli):
    # A range end may be an expression over other variables.
    r = run(cli, "prove", "i < 16", "--bind", "n=16", "--bind", "i=0:n")
    assert r.returncode == 0 and r.stdout == "proved\n", r.stderr
    r = run(cli, "prove", "i < 15", "--bind", "n=16", "--bind", "i=0:n")
    assert r.returncode == 1 and r.stdout.startswith("not proved"), r.stderr
    r = run(cli, "prove", "i < 16", "--bind", "n=16", "--bind", "i=0:n", "--strength",
            "symbolic_bound")
    assert r.returncode == 0
    r = run(cli, "prove", "i < n", "--strength", "strong")
    assert r.returncode == 2 and "--strength" in r.stderr


def test_prove_needs_a_condition(cli):
    r = run(cli, "prove", "x + 1")
    assert r.returncode == 1 and "not a condition" in r.stderr


def test_bound(cli):
    r = run(cli, "bound", "bx * 64 + tx", "--bind", "bx=0:8", "--bind", "tx=0:64")
    assert r.returncode == 0 and r.stdout == "[0, 511]\n"
    r = run(cli, "bound", "x % 8")
    assert r.returncode == 0 and r.stdout == "[0, 7]\n"  # floormod by a positive constant


def test_bound_infinities_and_dtypes(cli):
    r = run(cli, "bound", "n", "--var", "n:int64")
    assert r.returncode == 0 and r.stdout == "[-inf, +inf]\n"
    r = run(cli, "bound", "x")  # undeclared: int32
    assert r.returncode == 0 and r.stdout == "[-2147483648, 2147483647]\n"
    r = run(cli, "bound", "u", "--var", "u:uint8")
    assert r.returncode == 0 and r.stdout == "[0, 255]\n"


def test_expression_starting_with_minus(cli):
    r = run(cli, "simplify", "--", "-3 + 5")
    assert r.returncode == 0 and r.stdout == "2\n"
    r = run(cli, "simplify", "-3 + 5")  # a single dash is not an option
    assert r.returncode == 0 and r.stdout == "2\n"


def test_parse_error_has_line_and_column(cli):
    r = run(cli, "simplify", "x + * 2")
    assert r.returncode == 1 and r.stdout == ""
    assert "<expr>:1:" in r.stderr and "error" in r.stderr


def test_parse_error_in_an_option(cli):
    r = run(cli, "prove", "x < 4", "--assume", "x <")
    assert r.returncode == 1 and "--assume:1:" in r.stderr
    r = run(cli, "prove", "x < 4", "--bind", "x=0:(")
    assert r.returncode == 1 and "--bind x" in r.stderr


def test_usage_errors(cli):
    cases = [
        (("simplify",), "no expression"),
        (("simplify", "x", "--frob"), "unknown option '--frob'"),
        (("simplify", "x", "--bind"), "--bind needs a value"),
        (("simplify", "x", "--bind", "x"), "NAME=LO:HI"),
        (("simplify", "x", "--bind", "x=4:2"), "empty range"),
        (("simplify", "x", "--bind", "x=:2"), "both ends"),
        (("simplify", "x", "--var", "x"), "NAME:DTYPE"),
        (("simplify", "x", "--var", "x:float32"), "not a scalar integer"),
        (("simplify", "x", "--var", "x:int64", "--var", "x:int8"), "declared twice"),
        (("bound", "x", "--assume", " "), "--assume needs a condition"),
    ]
    for args, message in cases:
        r = run(cli, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
        assert "usage: tessel" in r.stderr


def test_rebinding_is_an_error(cli):
    r = run(cli, "simplify", "x", "--bind", "x=0:4", "--bind", "x=0:8")
    assert r.returncode == 1 and "already bound" in r.stderr


def test_assume_must_be_a_condition(cli):
    r = run(cli, "simplify", "x", "--assume", "x + 1")
    assert r.returncode == 1 and "not a condition" in r.stderr


def test_declared_dtype_is_used(cli):
    # int8 wraps: 100 + 100 folds to -56.
    r = run(cli, "simplify", "x + x", "--var", "x:int8", "--bind", "x=100")
    assert r.returncode == 0 and r.stdout == "T.int8(-56)\n", r.stdout + r.stderr


def test_assume_no_overflow_mode(cli):
    # Default: int32 wraps, so x * 4 // 2 is not x * 2 and x + 1 > x fails at INT32_MAX.
    r = run(cli, "simplify", "x * 4 // 2")
    assert r.returncode == 0 and r.stdout == "x * 4 // 2\n", r.stderr
    r = run(cli, "prove", "x + 1 > x")
    assert "counterexample x = 2147483647" in r.stdout
    r = run(cli, "simplify", "--assume-no-overflow", "x * 4 // 2")
    assert r.returncode == 0 and r.stdout == "x * 2\n", r.stderr
    r = run(cli, "prove", "--assume-no-overflow", "x + 1 > x")
    assert r.returncode == 0 and r.stdout == "proved\n", r.stdout + r.stderr
    # int8 still wraps in the mode.
    r = run(cli, "prove", "--assume-no-overflow", "--var", "a:int8", "a + T.int8(1) > a")
    assert r.stdout.startswith("not proved"), r.stdout
    r = run(cli, "simplify", "--help")
    assert "--assume-no-overflow" in r.stdout

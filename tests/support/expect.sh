# Assertions the e2e scripts share (sourced by tests/e2e/lib.sh, which defines `fail`).

# expect_in FILE PATTERN MESSAGE: FILE has a line matching PATTERN (a grep basic regular expression);
# otherwise FILE is printed, for the log, and the test fails with MESSAGE.
expect_in() {
  local file=$1 pattern=$2 message=$3
  grep -q -e "$pattern" "$file" || { cat "$file"; fail "$message"; }
}

# expect_rc RC WANT FILE PATTERN MESSAGE: a command exited with RC, which must be WANT, and its output FILE has
# a line matching PATTERN; otherwise FILE is printed and the test fails with MESSAGE and the exit code.
expect_rc() {
  local rc=$1 want=$2 file=$3 pattern=$4 message=$5
  [ "$rc" = "$want" ] && grep -q -e "$pattern" "$file" || { cat "$file"; fail "$message: exit $rc"; }
}

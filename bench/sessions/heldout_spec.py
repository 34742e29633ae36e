"""Heldout split: "logsift", an invented Rust command-line log filter. Hand-written sessions + queries."""

CWD = "/Users/tomasz/code/logsift"

SESSIONS = [
    (
        "non-utf8-paths",
        "2026-06-02T20:10:00",
        "main",
        [
            (
                "u",
                "got a bug report: logsift crashes when the directory contains a file with a latin-1 name. backtrace says src/walk.rs:41",
            ),
            (
                "read",
                "src/walk.rs",
                "pub fn collect(root: &Path, pattern: &Pattern) -> Vec<PathBuf> {\n    WalkDir::new(root)\n        .into_iter()\n        .filter_map(Result::ok)\n        .filter(|e| pattern.matches(e.path().to_str().unwrap()))\n        .map(|e| e.into_path())\n        .collect()\n}\n",
            ),
            (
                "a",
                "`to_str().unwrap()` panics on any path that isn't valid UTF-8. glob's Pattern has matches_path, which works on &Path directly.",
            ),
            (
                "edit",
                "src/walk.rs",
                "        .filter(|e| pattern.matches(e.path().to_str().unwrap()))",
                "        .filter(|e| pattern.matches_path(e.path()))",
            ),
            (
                "write",
                "tests/non_utf8.rs",
                '#[cfg(unix)]\n#[test]\nfn walks_non_utf8_file_names() {\n    use std::os::unix::ffi::OsStrExt;\n    let dir = tempfile::tempdir().unwrap();\n    let name = std::ffi::OsStr::from_bytes(b"caf\\xe9.log");\n    std::fs::write(dir.path().join(name), "ERROR x\\n").unwrap();\n    Command::cargo_bin("logsift").unwrap().arg("ERROR").arg(dir.path()).assert().success();\n}\n',
            ),
            (
                "bash",
                "cargo test --test non_utf8",
                "running 1 test\ntest walks_non_utf8_file_names ... ok\n\ntest result: ok. 1 passed; 0 failed",
            ),
        ],
    ),
    (
        "gzip-members",
        "2026-06-04T18:30:00",
        "feature/compressed",
        [
            (
                "u",
                "`logsift ERROR /var/log/syslog.2.gz` only finds matches from the first few hundred lines. zgrep finds 4000",
            ),
            (
                "read",
                "src/input.rs",
                'pub fn open(path: &Path) -> io::Result<Box<dyn BufRead>> {\n    let f = File::open(path)?;\n    if path.extension() == Some(OsStr::new("gz")) {\n        return Ok(Box::new(BufReader::new(GzDecoder::new(f))));\n    }\n    Ok(Box::new(BufReader::new(f)))\n}\n',
            ),
            (
                "bash",
                "gzip -l -v /var/log/syslog.2.gz; zcat /var/log/syslog.2.gz | wc -l; cargo run -q -- --count '' /var/log/syslog.2.gz",
                "method  crc     date  time           compressed        uncompressed  ratio uncompressed_name\ndefl 7a1c3e0f Jun  4 06:25            412331             3901122  89.4% /var/log/syslog.2\n51234\n612",
            ),
            (
                "a",
                "The file is several gzip members concatenated (logrotate with delaycompress appends). GzDecoder stops at the end of the first member; MultiGzDecoder reads them all.",
            ),
            ("edit", "src/input.rs", "GzDecoder::new(f)", "MultiGzDecoder::new(f)"),
            ("bash", "cargo run -q -- --count '' /var/log/syslog.2.gz", "51234"),
            ("u", "add a test fixture made of two concatenated gz files"),
            (
                "bash",
                "printf 'a ERROR\\n' | gzip > /tmp/1.gz && printf 'b ERROR\\n' | gzip > /tmp/2.gz && cat /tmp/1.gz /tmp/2.gz > tests/fixtures/multi_member.log.gz && cargo test multi_member",
                "test reads_all_gzip_members ... ok",
            ),
        ],
    ),
    (
        "zstd-feature",
        "2026-06-16T21:05:00",
        "feature/compressed",
        [
            (
                "u",
                "journald exports and our k8s log archive are .zst. support zstd but keep the default binary small",
            ),
            (
                "edit",
                "Cargo.toml",
                '[features]\ndefault = ["gzip"]\ngzip = ["dep:flate2"]',
                '[features]\ndefault = ["gzip"]\ngzip = ["dep:flate2"]\nzstd = ["dep:zstd"]',
            ),
            (
                "edit",
                "src/input.rs",
                "    Ok(Box::new(BufReader::new(f)))",
                '    #[cfg(feature = "zstd")]\n    if path.extension() == Some(OsStr::new("zst")) {\n        return Ok(Box::new(BufReader::new(zstd::Decoder::new(f)?)));\n    }\n    Ok(Box::new(BufReader::new(f)))',
            ),
            (
                "bash",
                "cargo build --release --features zstd",
                "error: failed to run custom build command for `zstd-sys v2.0.13+zstd.1.5.6`\n  error occurred: Failed to find tool. Is `cc` installed?",
                True,
            ),
            (
                "a",
                "zstd-sys compiles the C library. Xcode command line tools got removed by the macOS update; `xcode-select --install` fixes it locally. On CI ubuntu has cc already.",
            ),
            (
                "bash",
                "xcode-select -p && cargo build --release --features zstd && ls -l target/release/logsift | awk '{print $5}'",
                "/Library/Developer/CommandLineTools\n   Finished `release` profile [optimized] target(s) in 41.20s\n3342112",
            ),
            ("bash", "cargo build --release && ls -l target/release/logsift | awk '{print $5}'", "2488320"),
            (
                "a",
                "With zstd: 3.3 MB, default build stays 2.5 MB. When the feature is off and a .zst file is given, logsift now prints 'zstd support not compiled in (rebuild with --features zstd)'.",
            ),
        ],
    ),
    (
        "regex-prefilter",
        "2026-06-09T19:40:00",
        "perf/prefilter",
        [
            (
                "u",
                "searching a 2 GB nginx access log for 5 patterns takes 14 s, ripgrep does it in under 2. profile it",
            ),
            (
                "bash",
                'hyperfine --warmup 1 \'target/release/logsift -e " 502 " -e " 504 " -e timeout -e upstream -e refused big.log\'',
                "Time (mean ± σ):     14.112 s ±  0.214 s",
            ),
            (
                "bash",
                "cargo flamegraph --bin logsift -- -e ' 502 ' -e ' 504 ' -e timeout -e upstream -e refused big.log > /dev/null && echo done",
                "done\nflamegraph.svg written",
            ),
            (
                "a",
                "82% of the time is in Regex::is_match called five times per line, plus String allocation per line from lines(). I'll use a single RegexSet, and read with read_until into a reused Vec<u8> using regex::bytes.",
            ),
            (
                "edit",
                "src/matcher.rs",
                "pub struct Matcher { patterns: Vec<Regex> }",
                "pub struct Matcher { set: regex::bytes::RegexSet }",
            ),
            (
                "edit",
                "src/search.rs",
                "    for line in reader.lines() {\n        let line = line?;",
                "    let mut buf = Vec::with_capacity(4096);\n    while reader.read_until(b'\\n', &mut buf)? > 0 {\n        let line = &buf[..];",
            ),
            (
                "bash",
                'cargo build --release && hyperfine --warmup 1 \'target/release/logsift -e " 502 " -e " 504 " -e timeout -e upstream -e refused big.log\'',
                "Time (mean ± σ):      2.104 s ±  0.031 s",
            ),
            ("u", "from 14 to 2.1, nice. does -o (print only matching part) still work with the set?"),
            (
                "a",
                "RegexSet only tells which patterns matched, not where. For -o I keep the individual regexes and run only the ones the set reported, so the fast path is unchanged.",
            ),
        ],
    ),
    (
        "syslog-year",
        "2026-06-11T17:20:00",
        "feature/time-filter",
        [
            (
                "u",
                "implement --since/--until. lines are either RFC3339 (app logs) or classic syslog 'Jun  4 06:25:01' without a year",
            ),
            (
                "write",
                "src/time.rs",
                "pub fn parse_ts(line: &[u8], now: DateTime<Local>) -> Option<DateTime<FixedOffset>> {\n    if let Ok(ts) = DateTime::parse_from_rfc3339(first_token(line)?) {\n        return Some(ts);\n    }\n    parse_syslog(line, now.year())\n}\n",
            ),
            (
                "bash",
                "cargo test time::",
                "test time::tests::rfc3339 ... ok\ntest time::tests::syslog_basic ... ok\ntest time::tests::syslog_new_year ... FAILED\n---- time::tests::syslog_new_year stdout ----\nassertion failed: parsed 2027-12-31T23:59:58 is in the future (now = 2027-01-01T00:00:05)",
                True,
            ),
            (
                "a",
                "Syslog lines from Dec 31 read on Jan 1 get the current year and land in the future. Rule (same as rsyslog): if the inferred time is more than a day ahead of now, use the previous year.",
            ),
            (
                "edit",
                "src/time.rs",
                "    parse_syslog(line, now.year())",
                "    let ts = parse_syslog(line, now.year())?;\n    if ts > now + Duration::days(1) { parse_syslog(line, now.year() - 1) } else { Some(ts) }",
            ),
            ("bash", "cargo test time::", "test result: ok. 3 passed; 0 failed"),
        ],
    ),
    (
        "since-dst",
        "2026-07-01T09:15:00",
        "fix/since-tz",
        [
            (
                "u",
                "`--since '2026-03-29 02:30'` errors with 'invalid time' for a user in Berlin, and --since 1h gives wrong results on servers in UTC+2. the time filter needs a look",
            ),
            (
                "bash",
                "TZ=Europe/Berlin cargo run -q -- --since '2026-03-29 02:30' x tests/fixtures/app.log",
                "error: invalid --since value '2026-03-29 02:30': local time does not exist",
                True,
            ),
            (
                "read",
                "src/cli_time.rs",
                'pub fn parse_since(s: &str) -> Result<DateTime<Local>> {\n    if let Some(d) = parse_relative(s) {\n        return Ok(Local::now().naive_utc().and_local_timezone(Local).unwrap() - d);\n    }\n    let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M")?;\n    naive.and_local_timezone(Local).single().context("local time does not exist")\n}\n',
            ),
            (
                "a",
                "Two bugs: the relative path treats UTC wall time as local (off by the UTC offset), and a naive time inside the spring-forward gap has no local mapping. For the gap I'll take the earliest valid instant after it; for ambiguous autumn times the earlier one.",
            ),
            (
                "edit",
                "src/cli_time.rs",
                "        return Ok(Local::now().naive_utc().and_local_timezone(Local).unwrap() - d);",
                "        return Ok(Local::now() - d);",
            ),
            (
                "edit",
                "src/cli_time.rs",
                '    naive.and_local_timezone(Local).single().context("local time does not exist")',
                '    match naive.and_local_timezone(Local) {\n        LocalResult::Single(t) => Ok(t),\n        LocalResult::Ambiguous(early, _) => Ok(early),\n        LocalResult::None => Ok((naive + Duration::hours(1)).and_local_timezone(Local).earliest().context("no valid local time")?),\n    }',
            ),
            (
                "bash",
                "TZ=Europe/Berlin cargo test cli_time && TZ=Asia/Kolkata cargo test cli_time",
                "test result: ok. 6 passed; 0 failed\ntest result: ok. 6 passed; 0 failed",
            ),
        ],
    ),
    (
        "json-output",
        "2026-06-18T20:00:00",
        "feature/json",
        [
            (
                "u",
                "add --json so people can pipe matches into jq: one object per line with file, line number, timestamp if parsed, and the text",
            ),
            (
                "write",
                "src/output/json.rs",
                '#[derive(Serialize)]\nstruct Record<\'a> {\n    file: &\'a str,\n    line: u64,\n    #[serde(skip_serializing_if = "Option::is_none")]\n    ts: Option<String>,\n    text: Cow<\'a, str>,\n}\n\npub fn write_match(out: &mut impl Write, m: &Match) -> io::Result<()> {\n    serde_json::to_writer(&mut *out, &Record::from(m))?;\n    out.write_all(b"\\n")\n}\n',
            ),
            (
                "bash",
                "cargo run -q -- --json ERROR tests/fixtures/app.log | jq -c 'select(.line > 10)' | head -2",
                '{"file":"tests/fixtures/app.log","line":14,"ts":"2026-06-01T08:00:03Z","text":"ERROR db pool exhausted"}\n{"file":"tests/fixtures/app.log","line":29,"ts":"2026-06-01T08:02:44Z","text":"ERROR retry budget spent"}',
            ),
            ("u", "what about lines that aren't valid utf-8?"),
            (
                "a",
                "`text` uses String::from_utf8_lossy, so invalid bytes become U+FFFD; I added `text_b64` with the raw bytes base64-encoded only when the line wasn't valid UTF-8, so nothing is lost.",
            ),
            ("bash", "cargo test output::json", "test result: ok. 4 passed; 0 failed"),
        ],
    ),
    (
        "no-color",
        "2026-06-20T14:45:00",
        "main",
        [
            (
                "u",
                "when I redirect output to a file I get escape codes like ^[[31m in it. also someone asked for NO_COLOR support",
            ),
            (
                "grep",
                "Color::Red",
                'src/output/text.rs:22:        write!(out, "{}", Color::Red.paint(m.as_str()))?;',
            ),
            (
                "a",
                "Color is always on. I'll add --color auto|always|never (default auto = only when stdout is a terminal), and respect NO_COLOR / CLICOLOR_FORCE per no-color.org.",
            ),
            (
                "write",
                "src/output/color.rs",
                'pub fn enabled(choice: ColorChoice) -> bool {\n    match choice {\n        ColorChoice::Always => true,\n        ColorChoice::Never => false,\n        ColorChoice::Auto => {\n            if env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) { return false; }\n            if env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0") { return true; }\n            io::stdout().is_terminal()\n        }\n    }\n}\n',
            ),
            (
                "bash",
                "cargo run -q -- ERROR tests/fixtures/app.log > /tmp/out.txt && grep -c $'\\x1b' /tmp/out.txt",
                "0",
                True,
            ),
            (
                "a",
                "grep exits 1 when the count is 0 — that's the expected result here: no escape codes in redirected output.",
            ),
        ],
    ),
    (
        "windows-crlf",
        "2026-06-23T11:30:00",
        "ci/windows",
        [
            (
                "u",
                "added windows-latest to the CI matrix and 9 tests fail there, all snapshot/fixture comparisons",
            ),
            (
                "bash",
                "gh run view --job 2231 --log-failed | grep -m3 -A3 'panicked'",
                'thread \'counts_errors\' panicked at tests/cli.rs:58:5:\nassertion `left == right` failed\n  left: "ERROR a\\r\\nERROR b\\r\\n"\n right: "ERROR a\\nERROR b\\n"',
                True,
            ),
            (
                "a",
                "git on the Windows runner checks out the fixtures with autocrlf, so fixture files get \\r\\n and logsift faithfully prints them. Fixtures must be byte-exact: mark them binary-ish with eol=lf.",
            ),
            ("write", ".gitattributes", "tests/fixtures/** -text\ntests/snapshots/*.snap text eol=lf\n"),
            (
                "bash",
                "git add --renormalize . && git commit -qm 'Keep test fixtures byte-exact on Windows checkouts' && git push && gh run watch",
                "✓ test (windows-latest) in 3m02s\n✓ test (ubuntu-latest) in 1m41s\n✓ test (macos-latest) in 2m10s",
            ),
            ("u", "shouldn't logsift also strip \\r when matching on windows logs?"),
            (
                "a",
                "Good point for real CRLF logs: `$` in a pattern wouldn't match before \\r. I added --crlf which trims a trailing \\r before matching (ripgrep has the same flag).",
            ),
        ],
    ),
    (
        "cargo-dist-release",
        "2026-07-06T16:10:00",
        "chore/release",
        [
            (
                "u",
                "set up releases with cargo-dist: prebuilt binaries for mac/linux/windows and a homebrew formula in our tap. the tap repo needs a token, here's the PAT I made: ghp_Q7vLm2XkP9sTnB4wYcJ8dHf3RzA6uE1oGiK5 (store it as a secret, don't commit it)",
            ),
            (
                "bash",
                "cargo install cargo-dist --locked && cargo dist init --yes --installer shell --installer powershell --installer homebrew --tap tomasz/homebrew-tap",
                "cargo-dist 0.22.1 installed\nadded [workspace.metadata.dist] to Cargo.toml\ncreated .github/workflows/release.yml",
            ),
            (
                "bash",
                "gh secret set HOMEBREW_TAP_TOKEN < /dev/stdin && gh secret list",
                "HOMEBREW_TAP_TOKEN  Updated 2026-07-06",
            ),
            (
                "bash",
                "cargo dist plan",
                "error: Your Cargo.toml is missing `repository`, which is required for installers",
                True,
            ),
            (
                "edit",
                "Cargo.toml",
                'license = "MIT OR Apache-2.0"',
                'license = "MIT OR Apache-2.0"\nrepository = "https://github.com/tomasz/logsift"',
            ),
            (
                "bash",
                "cargo dist plan | head -6",
                "announcing v0.4.0\n  logsift 0.4.0\n    logsift-aarch64-apple-darwin.tar.xz\n    logsift-x86_64-unknown-linux-gnu.tar.xz\n    logsift-x86_64-pc-windows-msvc.zip\n    logsift-installer.sh",
            ),
            (
                "a",
                "The token went straight into the HOMEBREW_TAP_TOKEN repository secret via stdin and is not in any file. Tagging v0.4.0 will build and publish.",
            ),
        ],
    ),
    (
        "clap4-derive",
        "2026-06-06T10:00:00",
        "chore/clap4",
        [
            ("u", "we're still on clap 2 with the builder API and a 300-line args.rs. move to clap 4 derive"),
            (
                "read",
                "src/args.rs",
                'pub fn app() -> App<\'static, \'static> {\n    App::new("logsift")\n        .version(crate_version!())\n        .arg(Arg::with_name("pattern").short("e").multiple(true).takes_value(true))\n        .arg(Arg::with_name("count").short("c").long("count"))\n        // ... 280 more lines\n',
            ),
            (
                "write",
                "src/args.rs",
                '#[derive(Parser, Debug)]\n#[command(name = "logsift", version, about = "Filter and slice log files fast")]\npub struct Args {\n    /// Pattern to search (repeatable)\n    #[arg(short = \'e\', long = "regexp")]\n    pub patterns: Vec<String>,\n    /// Only print the number of matching lines\n    #[arg(short, long)]\n    pub count: bool,\n    /// Files or directories (default: stdin)\n    pub paths: Vec<PathBuf>,\n}\n',
            ),
            (
                "bash",
                "cargo test --test cli",
                "test version_flag ... FAILED\n---- version_flag stdout ----\nUnexpected stdout, failed var.is_match(logsift 0.3.2)\nerror: unexpected argument '-v' found",
                True,
            ),
            (
                "a",
                "clap 4 only defines -V/--version; clap 2 also accepted lowercase -v because we added it manually. -v is now --verbose, so I updated the test to -V and noted it in the CHANGELOG as a breaking change.",
            ),
            (
                "edit",
                "CHANGELOG.md",
                "## Unreleased",
                "## Unreleased\n\n- **Breaking:** `-v` no longer prints the version; use `-V`/`--version`. `-v` is now `--verbose`.",
            ),
            ("bash", "cargo test", "test result: ok. 58 passed; 0 failed"),
        ],
    ),
    (
        "follow-mode",
        "2026-07-09T19:25:00",
        "feature/follow",
        [
            (
                "u",
                "add -f/--follow like tail -f: keep the file open and print new matching lines as they're appended",
            ),
            (
                "write",
                "src/follow.rs",
                'pub fn follow(path: &Path, m: &Matcher, out: &mut impl Write) -> Result<()> {\n    let (tx, rx) = mpsc::channel();\n    let mut watcher = notify::recommended_watcher(tx)?;\n    watcher.watch(path.parent().unwrap_or(Path::new(".")), RecursiveMode::NonRecursive)?;\n    let mut reader = BufReader::new(File::open(path)?);\n    reader.seek(SeekFrom::End(0))?;\n    for ev in rx {\n        if ev?.paths.iter().any(|p| p == path) { drain(&mut reader, m, out)?; }\n    }\n    Ok(())\n}\n',
            ),
            (
                "bash",
                "(cargo run -q -- -f ERROR /tmp/f.log &) ; sleep 2; echo 'ERROR boom' >> /tmp/f.log; sleep 1; pkill -f 'logsift -f'",
                "ERROR boom",
            ),
            ("u", "and when logrotate renames the file and creates a new one?"),
            (
                "a",
                "I watch the directory, so a Create event for the same path reopens the file from the start (like tail -F). Detected by comparing the inode of the open handle with the path's current inode.",
            ),
            (
                "edit",
                "src/follow.rs",
                "        if ev?.paths.iter().any(|p| p == path) { drain(&mut reader, m, out)?; }",
                "        if ev?.paths.iter().any(|p| p == path) {\n            if inode(path)? != current_inode { reader = reopen(path)?; current_inode = inode(path)?; }\n            drain(&mut reader, m, out)?;\n        }",
            ),
            (
                "bash",
                "cargo test follow",
                "test follow::tests::new_lines_are_printed ... ok\ntest follow::tests::rename_rotation_reopens ... ok",
            ),
        ],
    ),
    (
        "copytruncate",
        "2026-07-21T08:50:00",
        "fix/follow-truncate",
        [
            (
                "u",
                "logsift -f goes silent after midnight on our app servers. logrotate there uses copytruncate, not rename",
            ),
            (
                "a",
                "With copytruncate the inode stays the same and the file shrinks to 0, but our reader's position is still at the old end, so reads return EOF forever. Need to detect that the size dropped below our offset.",
            ),
            (
                "read",
                "src/follow.rs",
                "fn drain(reader: &mut BufReader<File>, m: &Matcher, out: &mut impl Write) -> Result<()> {\n    let mut buf = Vec::new();\n    while reader.read_until(b'\\n', &mut buf)? > 0 {\n        if m.is_match(&buf) { out.write_all(&buf)?; }\n        buf.clear();\n    }\n    Ok(())\n}\n",
            ),
            (
                "edit",
                "src/follow.rs",
                "    let mut buf = Vec::new();",
                '    let pos = reader.stream_position()?;\n    if reader.get_ref().metadata()?.len() < pos {\n        eprintln!("logsift: {}: file truncated", path.display());\n        reader.seek(SeekFrom::Start(0))?;\n    }\n    let mut buf = Vec::new();',
            ),
            (
                "bash",
                "cargo test follow::tests::copytruncate",
                'test follow::tests::copytruncate_restarts_from_top ... FAILED\nthread panicked: expected "ERROR after" got ""',
                True,
            ),
            (
                "a",
                "notify on macOS (FSEvents) coalesces the truncate+write into one event that arrives before the data is flushed in the test. Adding a 250 ms poll fallback in follow mode makes it robust on all platforms.",
            ),
            (
                "bash",
                "cargo test follow",
                "test follow::tests::copytruncate_restarts_from_top ... ok\ntest follow::tests::new_lines_are_printed ... ok\ntest follow::tests::rename_rotation_reopens ... ok",
            ),
        ],
    ),
    (
        "msrv-bump",
        "2026-07-14T12:00:00",
        "chore/msrv",
        [
            ("u", "dependabot PR for notify 7 fails the MSRV job. what's going on"),
            (
                "bash",
                "cargo +1.70 check",
                "error: package `notify v7.0.0` cannot be built because it requires rustc 1.72 or newer, while the currently active rustc version is 1.70.0",
                True,
            ),
            (
                "a",
                "notify 7 needs 1.72, and is_some_and / IsTerminal we already use are fine from 1.70. Debian stable ships 1.78 now, so raising the MSRV to 1.74 (matching clap 4.5) costs nobody.",
            ),
            ("edit", "Cargo.toml", 'rust-version = "1.70"', 'rust-version = "1.74"'),
            (
                "edit",
                ".github/workflows/ci.yml",
                '        toolchain: [stable, "1.70"]',
                '        toolchain: [stable, "1.74"]',
            ),
            (
                "bash",
                "cargo +1.74 check --all-features",
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 24.93s",
            ),
            ("edit", "README.md", "Requires Rust 1.70 or newer.", "Requires Rust 1.74 or newer."),
        ],
    ),
    (
        "fuzz-parser",
        "2026-07-16T22:30:00",
        "test/fuzz",
        [
            ("u", "set up cargo-fuzz on the line/timestamp parser, let it run a bit"),
            (
                "bash",
                "cargo install cargo-fuzz && cargo fuzz init && cargo fuzz add parse_line",
                "Created fuzz/fuzz_targets/parse_line.rs",
            ),
            (
                "write",
                "fuzz/fuzz_targets/parse_line.rs",
                "#![no_main]\nuse libfuzzer_sys::fuzz_target;\n\nfuzz_target!(|data: &[u8]| {\n    let _ = logsift::parse::parse_line(data);\n});\n",
            ),
            (
                "bash",
                "cargo +nightly fuzz run parse_line -- -max_total_time=300",
                "thread '<unnamed>' panicked at src/parse.rs:77:31:\nrange end index 1 out of range for slice of length 0\n==1234== ERROR: libFuzzer: deadly signal\nartifact_prefix='fuzz/artifacts/parse_line/'; Test unit written to fuzz/artifacts/parse_line/crash-5b1f\nBase64: Wl0=",
                True,
            ),
            (
                "read",
                "src/parse.rs",
                "fn bracket_field(s: &[u8]) -> &[u8] {\n    let end = memchr(b']', s).unwrap_or(s.len());\n    &s[1..end]\n}\n",
            ),
            (
                "a",
                "Input `Z]` — a line whose only bracket is a closing one: end = 1... and for an empty remainder `s[1..0]`. Guard: only treat it as a bracket field if it starts with '[' and the ']' comes after.",
            ),
            (
                "edit",
                "src/parse.rs",
                "    let end = memchr(b']', s).unwrap_or(s.len());\n    &s[1..end]",
                "    match (s.first(), memchr(b']', s)) {\n        (Some(b'['), Some(end)) if end >= 1 => &s[1..end],\n        _ => &[],\n    }",
            ),
            (
                "bash",
                "cargo +nightly fuzz run parse_line -- -max_total_time=600",
                "#2097152 pulse  cov: 1411 ft: 5120 corp: 612/48Kb exec/s: 3495\nDone 2097152 runs in 600 second(s)",
            ),
        ],
    ),
    (
        "config-file",
        "2026-07-24T15:40:00",
        "feature/config",
        [
            (
                "u",
                "people want default flags without an alias. support a config file, ~/.config/logsift/config.toml, CLI flags win over it",
            ),
            (
                "write",
                "src/config.rs",
                '#[derive(Deserialize, Default)]\n#[serde(deny_unknown_fields)]\npub struct FileConfig {\n    pub color: Option<ColorChoice>,\n    pub context: Option<usize>,\n    pub ignore_case: Option<bool>,\n    pub exclude: Option<Vec<String>>,\n}\n\npub fn path() -> Option<PathBuf> {\n    env::var_os("LOGSIFT_CONFIG").map(PathBuf::from)\n        .or_else(|| dirs::config_dir().map(|d| d.join("logsift/config.toml")))\n}\n',
            ),
            (
                "bash",
                "mkdir -p ~/.config/logsift && printf 'colour = \"never\"\\n' > ~/.config/logsift/config.toml && cargo run -q -- x tests/fixtures/app.log",
                "error: ~/.config/logsift/config.toml: unknown field `colour`, expected one of `color`, `context`, `ignore_case`, `exclude` at line 1 column 1",
                True,
            ),
            (
                "a",
                "That's the deny_unknown_fields message doing its job with a clear path. On macOS, dirs::config_dir() is ~/Library/Application Support though, not ~/.config — I'll check XDG_CONFIG_HOME and ~/.config first on every platform, since that's what CLI users expect.",
            ),
            (
                "edit",
                "src/config.rs",
                '        .or_else(|| dirs::config_dir().map(|d| d.join("logsift/config.toml")))',
                '        .or_else(xdg_config_path)\n        .or_else(|| dirs::config_dir().map(|d| d.join("logsift/config.toml")))',
            ),
            ("bash", "cargo test config", "test result: ok. 5 passed; 0 failed"),
        ],
    ),
    (
        "mmap-sigbus",
        "2026-07-28T10:05:00",
        "perf/mmap",
        [
            ("u", "try memory-mapping big files instead of buffered reads, see if it's faster"),
            (
                "edit",
                "src/input.rs",
                "    Ok(Box::new(BufReader::new(f)))",
                "    if f.metadata()?.len() > MMAP_THRESHOLD {\n        let map = unsafe { Mmap::map(&f)? };\n        return Ok(Box::new(Cursor::new(map)));\n    }\n    Ok(Box::new(BufReader::new(f)))",
            ),
            (
                "bash",
                "hyperfine 'target/release/logsift timeout big.log' 'target/release/logsift --no-mmap timeout big.log'",
                "logsift timeout big.log: 1.412 s\nlogsift --no-mmap timeout big.log: 2.091 s",
            ),
            (
                "bash",
                "(target/release/logsift -c timeout big.log &) ; sleep 0.3; : > big.log",
                "zsh: bus error  target/release/logsift -c timeout big.log",
                True,
            ),
            (
                "a",
                "Truncating a mapped file while we read it raises SIGBUS and kills the process; that's exactly what logrotate copytruncate does to live logs. Safer: use mmap only for files not modified in the last 60 s and never in --follow mode, and keep --no-mmap.",
            ),
            (
                "edit",
                "src/input.rs",
                "    if f.metadata()?.len() > MMAP_THRESHOLD {",
                "    let meta = f.metadata()?;\n    if meta.len() > MMAP_THRESHOLD && !recently_modified(&meta, Duration::from_secs(60)) {",
            ),
            ("u", "ok keep it but off by default for stdin and follow. 30% is worth it"),
        ],
    ),
    (
        "insta-snapshots",
        "2026-06-26T13:15:00",
        "test/snapshots",
        [
            (
                "u",
                "the output formatting tests are hand-written strings and painful to update. switch them to insta snapshots",
            ),
            (
                "bash",
                "cargo add --dev insta --features filters && cargo install cargo-insta",
                "Adding insta v1.40.0 to dev-dependencies",
            ),
            (
                "write",
                "tests/format_snapshots.rs",
                '#[test]\nfn context_lines() {\n    let out = run(&["-C", "2", "ERROR", "tests/fixtures/app.log"]);\n    insta::with_settings!({filters => vec![(r"\\d+\\.\\d+ms", "[ELAPSED]")]}, {\n        insta::assert_snapshot!(out);\n    });\n}\n',
            ),
            (
                "bash",
                "cargo insta test --review",
                "stored 11 new snapshots\ninsta review finished: accepted 11",
            ),
            ("u", "one snapshot has my home dir path in it"),
            (
                "a",
                "The --stats footer prints absolute paths. Added a filter replacing the fixture dir with [FIXTURES] so snapshots are machine-independent.",
            ),
            ("bash", "cargo insta test --accept && grep -rl '/Users/' tests/snapshots | wc -l", "0"),
        ],
    ),
    (
        "broken-pipe",
        "2026-07-02T17:50:00",
        "main",
        [
            (
                "u",
                "`logsift ERROR huge.log | head -3` prints the 3 lines and then a panic: failed printing to stdout: Broken pipe (os error 32)",
            ),
            (
                "grep",
                "println!",
                'src/output/text.rs:31:        println!("{}", line);\nsrc/main.rs:44:    println!("{} matches", n);',
            ),
            (
                "a",
                "println! panics on write errors. I'll write through a locked BufWriter and treat io::ErrorKind::BrokenPipe at the top level as a normal exit (status 0, like grep).",
            ),
            (
                "edit",
                "src/main.rs",
                "fn main() -> ExitCode {\n    match run() {",
                "fn main() -> ExitCode {\n    match run() {\n        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,",
            ),
            (
                "edit",
                "src/output/text.rs",
                '        println!("{}", line);',
                '        out.write_all(line)?;\n        out.write_all(b"\\n")?;',
            ),
            (
                "bash",
                'cargo build -q && target/debug/logsift ERROR tests/fixtures/huge.log | head -3; echo "exit=${PIPESTATUS[0]}"',
                "ERROR a\nERROR b\nERROR c\nexit=0",
            ),
        ],
    ),
    (
        "histogram",
        "2026-08-04T20:35:00",
        "feature/histogram",
        [
            (
                "u",
                "feature idea: --histogram that prints how many matches per minute (or per hour with --bucket 1h) as a small bar chart in the terminal",
            ),
            (
                "write",
                "src/histogram.rs",
                'pub struct Histogram { bucket: Duration, counts: BTreeMap<i64, u64> }\n\nimpl Histogram {\n    pub fn add(&mut self, ts: DateTime<FixedOffset>) {\n        let k = ts.timestamp().div_euclid(self.bucket.num_seconds());\n        *self.counts.entry(k).or_default() += 1;\n    }\n\n    pub fn render(&self, width: usize, out: &mut impl Write) -> io::Result<()> {\n        let max = self.counts.values().copied().max().unwrap_or(1);\n        for (k, n) in &self.counts {\n            let bar = "█".repeat((n * width as u64 / max) as usize);\n            writeln!(out, "{} {:>6} {}", self.label(*k), n, bar)?;\n        }\n        Ok(())\n    }\n}\n',
            ),
            (
                "bash",
                "cargo run -q -- --histogram --bucket 1m ' 502 ' tests/fixtures/nginx.log",
                "08:00 UTC      3 ███\n08:01 UTC     41 ████████████████████████████████████████\n08:03 UTC      7 ██████",
            ),
            ("u", "minute 08:02 is missing completely, it should show 0"),
            (
                "a",
                "BTreeMap only has buckets that got hits. Filling the gaps between first and last key with zeros when rendering.",
            ),
            (
                "edit",
                "src/histogram.rs",
                "        for (k, n) in &self.counts {",
                "        let (lo, hi) = (*self.counts.keys().next().unwrap_or(&0), *self.counts.keys().last().unwrap_or(&0));\n        for k in lo..=hi {\n            let n = self.counts.get(&k).copied().unwrap_or(0);",
            ),
            ("bash", "cargo test histogram", "test result: ok. 3 passed; 0 failed"),
        ],
    ),
    (
        "clippy-pedantic",
        "2026-08-11T09:30:00",
        "chore/lints",
        [
            ("u", "turn on clippy::pedantic in CI and fix what comes up. allow the really noisy ones"),
            (
                "bash",
                "cargo clippy --all-targets -- -W clippy::pedantic 2>&1 | grep -oE 'clippy::[a-z_]+' | sort | uniq -c | sort -rn | head -6",
                "     38 clippy::cast_possible_truncation\n     27 clippy::must_use_candidate\n     19 clippy::missing_errors_doc\n     12 clippy::needless_pass_by_value\n      9 clippy::redundant_closure_for_method_calls\n      7 clippy::cast_sign_loss",
            ),
            (
                "edit",
                "Cargo.toml",
                "[lints.rust]",
                '[lints.clippy]\npedantic = { level = "warn", priority = -1 }\nmust_use_candidate = "allow"\nmissing_errors_doc = "allow"\nmodule_name_repetitions = "allow"\n\n[lints.rust]',
            ),
            (
                "a",
                "The cast_possible_truncation hits are real in histogram.rs (u64 -> usize on 32-bit) — switching those to try_from; needless_pass_by_value fixed by taking &Args.",
            ),
            (
                "bash",
                "cargo clippy --all-targets -- -D warnings",
                "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 6.12s",
            ),
            (
                "edit",
                ".github/workflows/ci.yml",
                "      - run: cargo clippy --all-targets",
                "      - run: cargo clippy --all-targets -- -D warnings",
            ),
        ],
    ),
    (
        "manpage-docsrs",
        "2026-08-14T18:00:00",
        "feature/manpage",
        [
            ("u", "generate a man page and bash/zsh/fish completions from the clap definition at build time"),
            (
                "write",
                "build.rs",
                'include!("src/args.rs");\n\nfn main() -> std::io::Result<()> {\n    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());\n    let cmd = Args::command();\n    clap_mangen::Man::new(cmd.clone()).render(&mut File::create(out.join("logsift.1"))?)?;\n    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {\n        clap_complete::generate_to(shell, &mut cmd.clone(), "logsift", &out)?;\n    }\n    Ok(())\n}\n',
            ),
            (
                "bash",
                "cargo build && ls target/debug/build/logsift-*/out/",
                "_logsift\nlogsift.1\nlogsift.bash\nlogsift.fish",
            ),
            (
                "u",
                "docs.rs build failed for 0.4.1: 'error: couldn't read src/args.rs: No such file or directory' ??",
            ),
            (
                "a",
                '0.4.1 moved the argument definitions to src/cli/args.rs, but build.rs still did include!("src/args.rs"). It built locally only because a stale untracked src/args.rs was still on disk; the packaged crate does not have it. Pointing include! at the new path and adding a `cargo package --list` check to CI.',
            ),
            ("edit", "build.rs", 'include!("src/args.rs");', 'include!("src/cli/args.rs");'),
            (
                "bash",
                "cargo package --list | grep -c 'src/cli/args.rs' && cargo publish --dry-run 2>&1 | tail -1",
                "1\nwarning: aborting upload due to dry run",
            ),
        ],
    ),
]

QUERIES = [
    # paraphrase
    ("crash on file names that are not valid unicode", "non-utf8-paths", "paraphrase"),
    ("compressed rotated syslog only partially searched", "gzip-members", "paraphrase"),
    ("add support for zstandard compressed logs as an optional feature", "zstd-feature", "paraphrase"),
    (
        "make searching for several patterns in a huge access log as fast as ripgrep",
        "regex-prefilter",
        "paraphrase",
    ),
    ("filter lines by time range with since and until options", "syslog-year", "paraphrase"),
    ("machine readable output to pipe into jq", "json-output", "paraphrase"),
    ("terminal color codes ending up in files when output is redirected", "no-color", "paraphrase"),
    ("tests failing only on the windows runner", "windows-crlf", "paraphrase"),
    ("port the argument parsing to the derive api", "clap4-derive", "paraphrase"),
    ("tail -f style live following of a log", "follow-mode", "paraphrase"),
    ("let users set default options in a settings file", "config-file", "paraphrase"),
    ("logsift piped into head panics", "broken-pipe", "paraphrase"),
    ("matches per minute bar chart", "histogram", "paraphrase"),
    # detail
    ("MultiGzDecoder instead of GzDecoder", "gzip-members", "detail"),
    ("zstd-sys needs a C compiler, xcode command line tools missing", "zstd-feature", "detail"),
    ("RegexSet with read_until into a reused byte buffer", "regex-prefilter", "detail"),
    ("syslog timestamps without a year read around new year end up in the future", "syslog-year", "detail"),
    ("local time does not exist during the daylight saving switch", "since-dst", "detail"),
    ("NO_COLOR and CLICOLOR_FORCE environment variables", "no-color", "detail"),
    (".gitattributes so fixtures keep LF line endings", "windows-crlf", "detail"),
    ("lowercase -v no longer prints the version", "clap4-derive", "detail"),
    ("range end index out of range in the bracket field parser", "fuzz-parser", "detail"),
    ("deny_unknown_fields rejected a misspelled key in the config", "config-file", "detail"),
    ("insta filter to hide the home directory path in snapshots", "insta-snapshots", "detail"),
    ("clippy pedantic cast_possible_truncation warnings", "clippy-pedantic", "detail"),
    ("include! of args.rs in build.rs for clap_mangen", "manpage-docsrs", "detail"),
    # outcome
    (
        "the session where follow mode stopped printing after the nightly log rotation with copytruncate",
        "copytruncate",
        "outcome",
    ),
    ("the one where truncating a memory-mapped file crashed with a bus error", "mmap-sigbus", "outcome"),
    ("multi-pattern search went from 14 seconds to about 2", "regex-prefilter", "outcome"),
    (
        "raised the minimum supported rust version because a dependency needed a newer compiler",
        "msrv-bump",
        "outcome",
    ),
    ("the docs.rs build broke after the args file moved", "manpage-docsrs", "outcome"),
    ("when we got prebuilt binaries and a homebrew formula published", "cargo-dist-release", "outcome"),
    ("the fuzzer found a panic", "fuzz-parser", "outcome"),
    ("empty minutes were missing from the histogram", "histogram", "outcome"),
    # file
    ("src/follow.rs inode check for renamed logs", "follow-mode", "file"),
    ("src/cli_time.rs", "since-dst", "file"),
    ("fuzz/fuzz_targets/parse_line.rs", "fuzz-parser", "file"),
    ("tests/format_snapshots.rs", "insta-snapshots", "file"),
    ("src/output/json.rs", "json-output", "file"),
    ("tests/non_utf8.rs", "non-utf8-paths", "file"),
]

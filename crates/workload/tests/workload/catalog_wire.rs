//! The exact arguments, and their RESP wire bytes, of every redis-benchmark test name.
//!
//! Expected values were taken from `redis-cli MONITOR` while redis-benchmark 7.0.15
//! ran each test, without `-r` (`-d 8`) and with `-r 1000 -d 5`:
//!
//! ```text
//! "SET" "key:__rand_int__" "VXKeHogK"          "SET" "key:000000000206" "VXKeH"
//! "ZADD" "myzset" "0" "element:__rand_int__"  "ZADD" "myzset" "000000000293" "element:000000000836"
//! "MSET" "key:000000000142" "VXKeH" "key:000000000893" "VXKeH" …  (ten pairs)
//! ```

use resplab_workload::{flags, Request, TestName, TestsSpec, Workload, WorkloadKind, WorkloadSpec};

fn spec(tests: Vec<TestName>, random_keyspace: Option<u64>, data_size: usize) -> WorkloadSpec {
    WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Tests(TestsSpec {
            tests,
            random_keyspace,
            data_size,
        }),
        setup_commands: vec![],
    }
}

/// First request of the single phase of test `t`.
fn first(t: TestName, r: Option<u64>, d: usize) -> Request {
    let w = Workload::new(&spec(vec![t], r, d)).unwrap();
    let mut g = w.generator(0, 0);
    let mut req = Request::new();
    assert_eq!(g.next(&mut req), 0);
    req
}

fn args(req: &Request) -> Vec<Vec<u8>> {
    req.args().map(<[u8]>::to_vec).collect()
}

fn b(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// The RESP encoding of a request, written out independently of `resplab-proto`:
/// an array of bulk strings, or the inline form for inline requests.
fn resp(req: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    if req.is_inline() {
        let parts: Vec<&[u8]> = req.args().collect();
        out.extend_from_slice(&parts.join(&b' '));
        out.extend_from_slice(b"\r\n");
        return out;
    }
    out.extend_from_slice(format!("*{}\r\n", req.arg_count()).as_bytes());
    for a in req.args() {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[test]
fn every_test_without_r_sends_redis_benchmarks_arguments() {
    let d = "VXKeHogK"; // -d 8
    let mset: Vec<&str> = std::iter::once("MSET")
        .chain((0..10).flat_map(|_| ["key:__rand_int__", d]))
        .collect();
    let mget: Vec<&str> = std::iter::once("MGET")
        .chain((0..10).map(|_| "key:__rand_int__"))
        .collect();
    let expected: Vec<(TestName, Vec<&str>)> = vec![
        (TestName::PingInline, vec!["PING"]),
        (TestName::PingMbulk, vec!["PING"]),
        (TestName::Set, vec!["SET", "key:__rand_int__", d]),
        (TestName::Get, vec!["GET", "key:__rand_int__"]),
        (TestName::Incr, vec!["INCR", "counter:__rand_int__"]),
        (TestName::Lpush, vec!["LPUSH", "mylist", d]),
        (TestName::Rpush, vec!["RPUSH", "mylist", d]),
        (TestName::Lpop, vec!["LPOP", "mylist"]),
        (TestName::Rpop, vec!["RPOP", "mylist"]),
        (
            TestName::Sadd,
            vec!["SADD", "myset", "element:__rand_int__"],
        ),
        (
            TestName::Hset,
            vec!["HSET", "myhash", "element:__rand_int__", d],
        ),
        (TestName::Spop, vec!["SPOP", "myset"]),
        (
            TestName::Zadd,
            vec!["ZADD", "myzset", "0", "element:__rand_int__"],
        ),
        (TestName::Zpopmin, vec!["ZPOPMIN", "myzset"]),
        (TestName::LpushForLrange, vec!["LPUSH", "mylist", d]),
        (TestName::Lrange100, vec!["LRANGE", "mylist", "0", "99"]),
        (TestName::Lrange300, vec!["LRANGE", "mylist", "0", "299"]),
        (TestName::Lrange500, vec!["LRANGE", "mylist", "0", "499"]),
        (TestName::Lrange600, vec!["LRANGE", "mylist", "0", "599"]),
        (TestName::Mset, mset),
        (TestName::Mget, mget),
        (TestName::Xadd, vec!["XADD", "mystream", "*", "myfield", d]),
    ];
    assert_eq!(expected.len(), TestName::ALL.len());
    for (t, want) in expected {
        let req = first(t, None, 8);
        assert_eq!(args(&req), b(&want), "{t:?}");
        assert_eq!(req.is_inline(), t == TestName::PingInline, "{t:?}");
        // Without -r every request of the test is identical.
        let w = Workload::new(&spec(vec![t], None, 8)).unwrap();
        let mut g = w.generator(0, 3);
        let mut again = Request::new();
        for _ in 0..5 {
            g.next(&mut again);
            assert_eq!(again, req, "{t:?}");
        }
    }
}

#[test]
fn wire_bytes_of_the_default_payload() {
    assert_eq!(resp(&first(TestName::PingInline, None, 3)), b"PING\r\n");
    assert_eq!(
        resp(&first(TestName::PingMbulk, None, 3)),
        b"*1\r\n$4\r\nPING\r\n"
    );
    assert_eq!(
        resp(&first(TestName::Set, None, 3)),
        b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n"
    );
    assert_eq!(
        resp(&first(TestName::Get, None, 3)),
        b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n"
    );
    assert_eq!(
        resp(&first(TestName::Lrange600, None, 3)),
        b"*4\r\n$6\r\nLRANGE\r\n$6\r\nmylist\r\n$1\r\n0\r\n$3\r\n599\r\n"
    );
    assert_eq!(
        resp(&first(TestName::Xadd, None, 3)),
        b"*5\r\n$4\r\nXADD\r\n$8\r\nmystream\r\n$1\r\n*\r\n$7\r\nmyfield\r\n$3\r\nVXK\r\n"
    );
}

/// Checks `arg` against `pattern`, where each `#` stands for one digit; returns the
/// numbers found at `#` runs (each must be 12 digits long in the pattern).
fn matches(arg: &[u8], pattern: &str) -> Option<Vec<u64>> {
    let p = pattern.as_bytes();
    if arg.len() != p.len() {
        return None;
    }
    let mut nums = Vec::new();
    let mut i = 0;
    while i < p.len() {
        if p[i] == b'#' {
            let run = &arg[i..i + 12];
            if !run.iter().all(u8::is_ascii_digit) || p[i..i + 12].iter().any(|&c| c != b'#') {
                return None;
            }
            nums.push(std::str::from_utf8(run).ok()?.parse().ok()?);
            i += 12;
        } else {
            if arg[i] != p[i] {
                return None;
            }
            i += 1;
        }
    }
    Some(nums)
}

#[test]
fn every_test_with_r_substitutes_twelve_digit_numbers_in_range() {
    let n = "############";
    let key = format!("key:{n}");
    let elem = format!("element:{n}");
    let counter = format!("counter:{n}");
    let d = "VXKeH"; // -d 5
    let mut mset = vec!["MSET".to_string()];
    for _ in 0..10 {
        mset.push(key.clone());
        mset.push(d.to_string());
    }
    let mut mget = vec!["MGET".to_string()];
    mget.extend((0..10).map(|_| key.clone()));
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let expected: Vec<(TestName, Vec<String>)> = vec![
        (TestName::PingInline, s(&["PING"])),
        (TestName::PingMbulk, s(&["PING"])),
        (TestName::Set, s(&["SET", &key, d])),
        (TestName::Get, s(&["GET", &key])),
        (TestName::Incr, s(&["INCR", &counter])),
        (TestName::Lpush, s(&["LPUSH", "mylist", d])),
        (TestName::Rpush, s(&["RPUSH", "mylist", d])),
        (TestName::Lpop, s(&["LPOP", "mylist"])),
        (TestName::Rpop, s(&["RPOP", "mylist"])),
        (TestName::Sadd, s(&["SADD", "myset", &elem])),
        (TestName::Hset, s(&["HSET", "myhash", &elem, d])),
        (TestName::Spop, s(&["SPOP", "myset"])),
        // With -r, ZADD's score is random too.
        (TestName::Zadd, s(&["ZADD", "myzset", n, &elem])),
        (TestName::Zpopmin, s(&["ZPOPMIN", "myzset"])),
        (TestName::LpushForLrange, s(&["LPUSH", "mylist", d])),
        (TestName::Lrange100, s(&["LRANGE", "mylist", "0", "99"])),
        (TestName::Lrange300, s(&["LRANGE", "mylist", "0", "299"])),
        (TestName::Lrange500, s(&["LRANGE", "mylist", "0", "499"])),
        (TestName::Lrange600, s(&["LRANGE", "mylist", "0", "599"])),
        (TestName::Mset, mset),
        (TestName::Mget, mget),
        (TestName::Xadd, s(&["XADD", "mystream", "*", "myfield", d])),
    ];
    assert_eq!(expected.len(), TestName::ALL.len());
    for (t, want) in expected {
        let w = Workload::new(&spec(vec![t], Some(1000), 5)).unwrap();
        let mut g = w.generator(0, 0);
        let mut req = Request::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            g.next(&mut req);
            assert_eq!(req.arg_count(), want.len(), "{t:?}");
            let mut in_request = Vec::new();
            for (arg, pat) in req.args().zip(&want) {
                let nums = matches(arg, pat).unwrap_or_else(|| {
                    panic!("{t:?}: {:?} !~ {pat}", String::from_utf8_lossy(arg))
                });
                for x in nums {
                    assert!(x < 1000, "{t:?}: {x}");
                    in_request.push(x);
                    seen.insert(x);
                }
            }
            if in_request.len() == 10 {
                // MSET/MGET: each key of a request draws its own number.
                let distinct: std::collections::HashSet<_> = in_request.iter().collect();
                assert!(distinct.len() > 5, "{t:?}: {in_request:?}");
            }
        }
        if want.iter().any(|a| a.contains('#')) {
            // Numbers vary from request to request and cover the range.
            assert!(
                seen.len() > 100,
                "{t:?}: only {} distinct numbers",
                seen.len()
            );
        }
    }
}

#[test]
fn r_larger_than_twelve_digits_keeps_the_low_digits_like_redis_benchmark() {
    let w = Workload::new(&spec(vec![TestName::Get], Some(10_000_000_000_000_000), 3)).unwrap();
    let mut g = w.generator(0, 0);
    let mut req = Request::new();
    for _ in 0..100 {
        g.next(&mut req);
        let key = req.arg(1).unwrap();
        assert_eq!(key.len(), 16);
        assert!(key[4..].iter().all(u8::is_ascii_digit));
    }
}

#[test]
fn d_sets_payload_size_including_zero_and_large() {
    for d in [0usize, 1, 3, 100, 4096, 100_000] {
        let req = first(TestName::Set, None, d);
        let v = req.arg(2).unwrap();
        assert_eq!(v.len(), d);
        assert_eq!(v, resplab_workload::catalog::payload(d).as_slice());
        let req = first(TestName::Mset, Some(10), d);
        assert!(req.args().skip(2).step_by(2).all(|v| v.len() == d));
    }
}

#[test]
fn phases_carry_names_and_csv_titles() {
    let tests = flags::parse_tests("lrange_500,set,ping_mbulk").unwrap();
    let w = Workload::new(&WorkloadSpec::tests(tests)).unwrap();
    let got: Vec<(&str, &str, Vec<String>)> = w
        .phases()
        .iter()
        .map(|p| (p.name.as_str(), p.title.as_str(), p.commands.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("PING_MBULK", "PING_MBULK", vec!["PING_MBULK".to_string()]),
            ("SET", "SET", vec!["SET".to_string()]),
            (
                "LPUSH_FOR_LRANGE",
                "LPUSH (needed to benchmark LRANGE)",
                vec!["LPUSH_FOR_LRANGE".to_string()]
            ),
            (
                "LRANGE_500",
                "LRANGE_500 (first 500 elements)",
                vec!["LRANGE_500".to_string()]
            ),
        ]
    );
}

#[test]
fn default_spec_runs_the_default_suite() {
    let w = Workload::new(&WorkloadSpec::default()).unwrap();
    assert_eq!(w.phases().len(), 21);
    assert_eq!(w.phases()[0].name, "PING_INLINE");
    assert_eq!(w.phases()[20].name, "XADD");
    let mut g = w.generator(2, 0);
    let mut req = Request::new();
    g.next(&mut req);
    assert_eq!(args(&req), b(&["SET", "key:__rand_int__", "VXK"]));
}

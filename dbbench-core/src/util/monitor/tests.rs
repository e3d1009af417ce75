use super::*;

#[test]
fn parses_the_kernel_formats() {
    let cpu = parse_cpu_line("cpu  741880 362 255401 782239 32207 0 6363 443 0 0").unwrap();
    assert_eq!(cpu.busy, 741_880 + 362 + 255_401 + 6363);
    assert_eq!(cpu.steal, 443);
    assert_eq!(
        cpu.total,
        741_880 + 362 + 255_401 + 782_239 + 32_207 + 6363 + 443
    );
    let psi = "some avg10=0.00 avg60=0.00 avg300=2.22 total=1883861939\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
    assert_eq!(parse_pressure(psi), Some(1_883_861_939));
    let stat = "4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 500 0 0 0 \
                    120 30 7 3 20 0 1 0 100 0 0";
    // flags 0x00208040 has PF_KTHREAD; 4194560 (0x00400100) has not.
    let kworker = "77 (kworker/u8:3-loop0) I 2 0 0 0 -1 2129984 0 0 0 0 \
                       180 2061 0 0 20 0 1 0 100 0 0";
    assert_eq!(kernel_stat(kworker), Some(2241));
    assert_eq!(kernel_stat(stat), None);
}

#[test]
fn kernel_threads_count_from_their_first_read() {
    let then = [(2, 5), (40, 100), (77, 1000)];
    // 40 ran 20 ticks, 77 ended, 90 started and ran 7.
    let now = [(2, 5), (40, 120), (90, 7)];
    assert_eq!(kernel_delta(&then, &now), 27);
    // A pid reused by a thread with fewer ticks than its predecessor counts nothing.
    assert_eq!(kernel_delta(&[(40, 100)], &[(40, 3)]), 0);
}

#[cfg(target_os = "linux")]
#[test]
fn kernel_threads_are_found_where_kthreadd_is_in_view() {
    let in_view = std::fs::read_to_string("/proc/2/comm").is_ok_and(|c| c.trim() == "kthreadd");
    let found = kernel_ticks();
    if in_view {
        let found = found.expect("kthreadd is in view, so its threads are found");
        // kthreadd and at least its per-CPU workers.
        assert!(found.len() > 2, "{found:?}");
        assert!(found.windows(2).all(|w| w[0].0 < w[1].0));
        // This process is not a kernel thread.
        let me = std::process::id();
        assert!(found.iter().all(|&(pid, _)| pid != me));
    } else {
        assert!(found.is_none());
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_window_of_own_work_is_not_blamed_on_others() {
    let monitor = Monitor::open();
    // Half a second of this process's own CPU work.
    let start = Instant::now();
    let mut x = 1u64;
    while start.elapsed().as_millis() < 300 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    std::hint::black_box(x);
    let seen = monitor.close();
    assert!(seen.window_s >= 0.3);
    // Other tests of this binary run beside this one on their own threads, which are this
    // process's: they count as own work, so nothing here is attributed to others.
    assert!(seen.other_cpu_cores.is_some() && seen.steal.is_some());
    assert!(seen.judged);
}

/// A busy loop that is not this process's descendant (its shell ends at once, so it is
/// reparented), as a server on this machine is not; its pid and its stop.
#[cfg(target_os = "linux")]
fn foreign_burner() -> u32 {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("timeout 5 sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!")
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_local_servers_cpu_is_counted_apart_from_the_neighbours() {
    // The two monitors open and close a few milliseconds apart, so on a machine busy with
    // other work their windows see slightly different neighbours: up to three attempts, each
    // of which must hold the identity on its own. A wrong attribution fails all three.
    let mut seen = Vec::new();
    for _ in 0..3 {
        match one_server_attribution() {
            Ok(()) => return,
            Err(e) => seen.push(e),
        }
    }
    panic!("three attempts, none held: {seen:#?}");
}

/// One window seen by two monitors, one told the burner is the server and one not.
#[cfg(target_os = "linux")]
fn one_server_attribution() -> std::result::Result<(), String> {
    let burner = foreign_burner();
    let proc = ProcFs::system();
    assert!(!proc.descendants(std::process::id()).contains(&burner));
    let plain = Monitor::open();
    let apart = Monitor::open_with(&[burner]);
    std::thread::sleep(std::time::Duration::from_millis(800));
    let apart = apart.close();
    let plain = plain.close();
    // SAFETY: kill has no memory preconditions; `timeout` passes the signal to its loop.
    unsafe { libc::kill(burner as i32, libc::SIGTERM) };
    assert_eq!(plain.server_cpu_cores, None);
    let server = apart.server_cpu_cores.expect("the burner's tree is read");
    // What one monitor calls the server's, the other calls a neighbour's.
    let (with, without) = (
        apart.other_cpu_cores.unwrap(),
        plain.other_cpu_cores.unwrap(),
    );
    if server > 0.2 && (without - with - server).abs() < 0.1 {
        Ok(())
    } else {
        Err(format!("without {without}, with {with}, server {server}"))
    }
}

#[test]
fn a_server_inside_dbbenchs_own_tree_is_counted_once() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .unwrap();
    // The child is this process's own: as a server root it adds nothing of its own.
    let (own, server) = process_ticks(&[child.id()]);
    assert!(own.is_some());
    assert_eq!(server, None);
    child.kill().unwrap();
    child.wait().unwrap();
}

//! Allocation units shared by every backend, chosen to match SQL Server's.

/// A page: 8 KiB, as in SQL Server (the embedded engine uses `PRAGMA page_size = 8192`).
pub const PAGE: u64 = 8 * 1024;

/// An extent: eight pages, the unit in which data files are allocated.
pub const EXTENT: u64 = 8 * PAGE;

/// One mebibyte.
pub const MIB: u64 = 1024 * 1024;

/// `bytes` for messages, in the binary units SQL Server calls KB, MB, GB, TB: `37.2 GB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A fraction as a percentage without trailing zeros: `0.05` → `5`, `0.025` → `2.5`.
pub fn percent_text(fraction: f64) -> String {
    let text = format!("{:.2}", fraction * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A duration as the attribute writes it: `5m`, `90s`, `1500ms`.
pub fn duration_text(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    match ms {
        ms if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

#[cfg(test)]
mod format_tests {
    #[test]
    fn percents_and_durations_read_as_written() {
        assert_eq!(super::percent_text(0.05), "5");
        assert_eq!(super::percent_text(0.025), "2.5");
        assert_eq!(super::percent_text(0.1), "10");
        let d = std::time::Duration::from_millis;
        assert_eq!(super::duration_text(d(300_000)), "5m");
        assert_eq!(super::duration_text(d(90_000)), "90s");
        assert_eq!(super::duration_text(d(7_200_000)), "2h");
        assert_eq!(super::duration_text(d(1500)), "1500ms");
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(super::format_bytes(512), "512 bytes");
        assert_eq!(super::format_bytes(8 * super::MIB), "8.0 MB");
        assert_eq!(super::format_bytes(1 << 40), "1.0 TB");
        assert_eq!(super::format_bytes(1 << 50), "1024.0 TB");
    }
}

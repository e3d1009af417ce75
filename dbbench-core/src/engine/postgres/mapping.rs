//! A cell's storage options in PostgreSQL's terms ([`Mapping`]), as [`options`](super::options)
//! makes them and [`pinned`](super::pinned) completes them: the types both share, apart from
//! either so that neither imports the other.

/// How dbbench reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A cluster dbbench creates.
    Managed,
    /// The server in `DBBENCH_POSTGRES`.
    External,
}

/// WAL to make ahead of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pregrow {
    /// Bytes of segments to have ahead (`log_size`).
    pub target_bytes: u64,
    /// Bytes per step (`log_pregrow`); a checkpoint follows each step.
    pub step_bytes: u64,
}

/// A cell's options in PostgreSQL's terms.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Mapping {
    /// `initdb --wal-segsize`, MB.
    pub wal_segsize_mb: Option<u32>,
    /// Server settings for `postgresql.conf`, value as written in the file.
    pub server: Vec<(String, String)>,
    /// `ALTER DATABASE … SET` settings.
    pub database: Vec<(String, String)>,
    /// The volume of the data directory.
    pub data_volume: Option<&'static str>,
    /// The volume of the WAL directory.
    pub wal_volume: Option<&'static str>,
    /// Segments to make before the window.
    pub pregrow: Option<Pregrow>,
    /// Each server setting a declared option sets, with that option (`max_wal_size` ←
    /// `log_size`): a difference in it between cells is the declared difference, which the
    /// confounder check does not list. Settings pinned alike in every cell ([`super::pinned`])
    /// are not here.
    pub declared: Vec<(String, &'static str)>,
}

impl Mapping {
    /// Marks server setting `setting` as set from declared option `option`.
    pub(super) fn declare(&mut self, setting: &str, option: &'static str) {
        self.declared.push((setting.to_string(), option));
    }

    /// [`Mapping::declared`] by setting name.
    pub fn declared_by_setting(&self) -> std::collections::BTreeMap<String, String> {
        self.declared
            .iter()
            .map(|(setting, option)| (setting.clone(), option.to_string()))
            .collect()
    }
}

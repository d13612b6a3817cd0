//! The columns of each computed relation, as PostgreSQL 15 defines them
//! (types this server lacks are shown as the nearest it has: float4 as
//! double precision, xid as bigint, aclitem[] as text[], pg_node_tree and
//! anyarray as text).

use snapscale_values::{Elem, Reg, SqlType};

use super::ViewColumn;

pub(super) const fn c(name: &'static str, ty: SqlType) -> ViewColumn {
    ViewColumn { name, ty }
}

const OID: SqlType = SqlType::Oid;
const NAME: SqlType = SqlType::Name;
const BOOL: SqlType = SqlType::Bool;
const INT2: SqlType = SqlType::Int2;
const INT4: SqlType = SqlType::Int4;
const INT8: SqlType = SqlType::Int8;
const FLOAT: SqlType = SqlType::Float8;
const REAL: SqlType = SqlType::Float4;
const REALS: SqlType = SqlType::Array(Elem::Float4);
/// anyarray, shown as its text.
const ANYARRAY: SqlType = SqlType::Text;
const TEXT: SqlType = SqlType::Text;
const CHAR: SqlType = SqlType::Char1;
const XID: SqlType = SqlType::Int8;
const REGPROC: SqlType = SqlType::Reg(Reg::Proc);
const REGTYPE: SqlType = SqlType::Reg(Reg::Type);
const TSTZ: SqlType = SqlType::TimestampTz;
const ACL: SqlType = SqlType::Array(Elem::Text);
const TEXTS: SqlType = SqlType::Array(Elem::Text);
const NODE: SqlType = SqlType::Text;
const INT2V: SqlType = SqlType::Int2Vector;
const OIDV: SqlType = SqlType::OidVector;
const INT2S: SqlType = SqlType::Array(Elem::Int2);
const OIDS: SqlType = SqlType::Array(Elem::Oid);
const CHARS: SqlType = SqlType::Array(Elem::Char1);
// information_schema's domains.
pub(super) const SQL_ID: SqlType = SqlType::Name;
pub(super) const CARDINAL: SqlType = SqlType::Int4;
pub(super) const CHARDATA: SqlType = SqlType::Varchar(None);
pub(super) const YESNO: SqlType = SqlType::Varchar(Some(3));

pub(super) const PG_NAMESPACE: &[ViewColumn] =
    &[c("oid", OID), c("nspname", NAME), c("nspowner", OID), c("nspacl", ACL)];

pub(super) const PG_CLASS: &[ViewColumn] = &[
    c("oid", OID),
    c("relname", NAME),
    c("relnamespace", OID),
    c("reltype", OID),
    c("reloftype", OID),
    c("relowner", OID),
    c("relam", OID),
    c("relfilenode", OID),
    c("reltablespace", OID),
    c("relpages", INT4),
    c("reltuples", REAL),
    c("relallvisible", INT4),
    c("reltoastrelid", OID),
    c("relhasindex", BOOL),
    c("relisshared", BOOL),
    c("relpersistence", CHAR),
    c("relkind", CHAR),
    c("relnatts", INT2),
    c("relchecks", INT2),
    c("relhasrules", BOOL),
    c("relhastriggers", BOOL),
    c("relhassubclass", BOOL),
    c("relrowsecurity", BOOL),
    c("relforcerowsecurity", BOOL),
    c("relispopulated", BOOL),
    c("relreplident", CHAR),
    c("relispartition", BOOL),
    c("relrewrite", OID),
    c("relfrozenxid", XID),
    c("relminmxid", XID),
    c("relacl", ACL),
    c("reloptions", TEXTS),
    c("relpartbound", NODE),
];

pub(super) const PG_ATTRIBUTE: &[ViewColumn] = &[
    c("attrelid", OID),
    c("attname", NAME),
    c("atttypid", OID),
    c("attstattarget", INT4),
    c("attlen", INT2),
    c("attnum", INT2),
    c("attndims", INT4),
    c("attcacheoff", INT4),
    c("atttypmod", INT4),
    c("attbyval", BOOL),
    c("attalign", CHAR),
    c("attstorage", CHAR),
    c("attcompression", CHAR),
    c("attnotnull", BOOL),
    c("atthasdef", BOOL),
    c("atthasmissing", BOOL),
    c("attidentity", CHAR),
    c("attgenerated", CHAR),
    c("attisdropped", BOOL),
    c("attislocal", BOOL),
    c("attinhcount", INT4),
    c("attcollation", OID),
    c("attacl", ACL),
    c("attoptions", TEXTS),
    c("attfdwoptions", TEXTS),
    c("attmissingval", TEXT),
];

pub(super) const PG_TYPE: &[ViewColumn] = &[
    c("oid", OID),
    c("typname", NAME),
    c("typnamespace", OID),
    c("typowner", OID),
    c("typlen", INT2),
    c("typbyval", BOOL),
    c("typtype", CHAR),
    c("typcategory", CHAR),
    c("typispreferred", BOOL),
    c("typisdefined", BOOL),
    c("typdelim", CHAR),
    c("typrelid", OID),
    c("typsubscript", REGPROC),
    c("typelem", OID),
    c("typarray", OID),
    c("typinput", REGPROC),
    c("typoutput", REGPROC),
    c("typreceive", REGPROC),
    c("typsend", REGPROC),
    c("typmodin", REGPROC),
    c("typmodout", REGPROC),
    c("typanalyze", REGPROC),
    c("typalign", CHAR),
    c("typstorage", CHAR),
    c("typnotnull", BOOL),
    c("typbasetype", OID),
    c("typtypmod", INT4),
    c("typndims", INT4),
    c("typcollation", OID),
    c("typdefaultbin", NODE),
    c("typdefault", TEXT),
    c("typacl", ACL),
];

pub(super) const PG_INDEX: &[ViewColumn] = &[
    c("indexrelid", OID),
    c("indrelid", OID),
    c("indnatts", INT2),
    c("indnkeyatts", INT2),
    c("indisunique", BOOL),
    c("indnullsnotdistinct", BOOL),
    c("indisprimary", BOOL),
    c("indisexclusion", BOOL),
    c("indimmediate", BOOL),
    c("indisclustered", BOOL),
    c("indisvalid", BOOL),
    c("indcheckxmin", BOOL),
    c("indisready", BOOL),
    c("indislive", BOOL),
    c("indisreplident", BOOL),
    c("indkey", INT2V),
    c("indcollation", OIDV),
    c("indclass", OIDV),
    c("indoption", INT2V),
    c("indexprs", NODE),
    c("indpred", NODE),
];

pub(super) const PG_CONSTRAINT: &[ViewColumn] = &[
    c("oid", OID),
    c("conname", NAME),
    c("connamespace", OID),
    c("contype", CHAR),
    c("condeferrable", BOOL),
    c("condeferred", BOOL),
    c("convalidated", BOOL),
    c("conrelid", OID),
    c("contypid", OID),
    c("conindid", OID),
    c("conparentid", OID),
    c("confrelid", OID),
    c("confupdtype", CHAR),
    c("confdeltype", CHAR),
    c("confmatchtype", CHAR),
    c("conislocal", BOOL),
    c("coninhcount", INT4),
    c("connoinherit", BOOL),
    c("conkey", INT2S),
    c("confkey", INT2S),
    c("conpfeqop", OIDS),
    c("conppeqop", OIDS),
    c("conffeqop", OIDS),
    c("confdelsetcols", INT2S),
    c("conexclop", OIDS),
    c("conbin", NODE),
];

pub(super) const PG_ATTRDEF: &[ViewColumn] =
    &[c("oid", OID), c("adrelid", OID), c("adnum", INT2), c("adbin", NODE)];

pub(super) const PG_SEQUENCE: &[ViewColumn] = &[
    c("seqrelid", OID),
    c("seqtypid", OID),
    c("seqstart", INT8),
    c("seqincrement", INT8),
    c("seqmax", INT8),
    c("seqmin", INT8),
    c("seqcache", INT8),
    c("seqcycle", BOOL),
];

pub(super) const PG_AM: &[ViewColumn] =
    &[c("oid", OID), c("amname", NAME), c("amhandler", REGPROC), c("amtype", CHAR)];

pub(super) const PG_DATABASE: &[ViewColumn] = &[
    c("oid", OID),
    c("datname", NAME),
    c("datdba", OID),
    c("encoding", INT4),
    c("datlocprovider", CHAR),
    c("datistemplate", BOOL),
    c("datallowconn", BOOL),
    c("datconnlimit", INT4),
    c("datfrozenxid", XID),
    c("datminmxid", XID),
    c("dattablespace", OID),
    c("datcollate", TEXT),
    c("datctype", TEXT),
    c("daticulocale", TEXT),
    c("datcollversion", TEXT),
    c("datacl", ACL),
];

pub(super) const PG_ROLES: &[ViewColumn] = &[
    c("rolname", NAME),
    c("rolsuper", BOOL),
    c("rolinherit", BOOL),
    c("rolcreaterole", BOOL),
    c("rolcreatedb", BOOL),
    c("rolcanlogin", BOOL),
    c("rolreplication", BOOL),
    c("rolconnlimit", INT4),
    c("rolpassword", TEXT),
    c("rolvaliduntil", TSTZ),
    c("rolbypassrls", BOOL),
    c("rolconfig", TEXTS),
    c("oid", OID),
];

pub(super) const PG_AUTHID: &[ViewColumn] = &[
    c("oid", OID),
    c("rolname", NAME),
    c("rolsuper", BOOL),
    c("rolinherit", BOOL),
    c("rolcreaterole", BOOL),
    c("rolcreatedb", BOOL),
    c("rolcanlogin", BOOL),
    c("rolreplication", BOOL),
    c("rolbypassrls", BOOL),
    c("rolconnlimit", INT4),
    c("rolpassword", TEXT),
    c("rolvaliduntil", TSTZ),
];

pub(super) const PG_USER: &[ViewColumn] = &[
    c("usename", NAME),
    c("usesysid", OID),
    c("usecreatedb", BOOL),
    c("usesuper", BOOL),
    c("userepl", BOOL),
    c("usebypassrls", BOOL),
    c("passwd", TEXT),
    c("valuntil", TSTZ),
    c("useconfig", TEXTS),
];

pub(super) const PG_AUTH_MEMBERS: &[ViewColumn] =
    &[c("roleid", OID), c("member", OID), c("grantor", OID), c("admin_option", BOOL)];

pub(super) const PG_PROC: &[ViewColumn] = &[
    c("oid", OID),
    c("proname", NAME),
    c("pronamespace", OID),
    c("proowner", OID),
    c("prolang", OID),
    c("procost", FLOAT),
    c("prorows", FLOAT),
    c("provariadic", OID),
    c("prosupport", REGPROC),
    c("prokind", CHAR),
    c("prosecdef", BOOL),
    c("proleakproof", BOOL),
    c("proisstrict", BOOL),
    c("proretset", BOOL),
    c("provolatile", CHAR),
    c("proparallel", CHAR),
    c("pronargs", INT2),
    c("pronargdefaults", INT2),
    c("prorettype", OID),
    c("proargtypes", OIDV),
    c("proallargtypes", OIDS),
    c("proargmodes", CHARS),
    c("proargnames", TEXTS),
    c("proargdefaults", NODE),
    c("protrftypes", OIDS),
    c("prosrc", TEXT),
    c("probin", TEXT),
    c("prosqlbody", NODE),
    c("proconfig", TEXTS),
    c("proacl", ACL),
];

pub(super) const PG_DESCRIPTION: &[ViewColumn] =
    &[c("objoid", OID), c("classoid", OID), c("objsubid", INT4), c("description", TEXT)];

pub(super) const PG_SHDESCRIPTION: &[ViewColumn] =
    &[c("objoid", OID), c("classoid", OID), c("description", TEXT)];

pub(super) const PG_INHERITS: &[ViewColumn] =
    &[c("inhrelid", OID), c("inhparent", OID), c("inhseqno", INT4), c("inhdetachpending", BOOL)];

pub(super) const PG_COLLATION: &[ViewColumn] = &[
    c("oid", OID),
    c("collname", NAME),
    c("collnamespace", OID),
    c("collowner", OID),
    c("collprovider", CHAR),
    c("collisdeterministic", BOOL),
    c("collencoding", INT4),
    c("collcollate", TEXT),
    c("collctype", TEXT),
    c("colliculocale", TEXT),
    c("collversion", TEXT),
];

pub(super) const PG_TABLESPACE: &[ViewColumn] =
    &[c("oid", OID), c("spcname", NAME), c("spcowner", OID), c("spcacl", ACL), c("spcoptions", TEXTS)];

pub(super) const PG_POLICY: &[ViewColumn] = &[
    c("oid", OID),
    c("polname", NAME),
    c("polrelid", OID),
    c("polcmd", CHAR),
    c("polpermissive", BOOL),
    c("polroles", OIDS),
    c("polqual", NODE),
    c("polwithcheck", NODE),
];

pub(super) const PG_STATISTIC_EXT: &[ViewColumn] = &[
    c("oid", OID),
    c("stxrelid", OID),
    c("stxname", NAME),
    c("stxnamespace", OID),
    c("stxowner", OID),
    c("stxstattarget", INT4),
    c("stxkeys", INT2V),
    c("stxkind", CHARS),
    c("stxexprs", NODE),
];

pub(super) const PG_PUBLICATION: &[ViewColumn] = &[
    c("oid", OID),
    c("pubname", NAME),
    c("pubowner", OID),
    c("puballtables", BOOL),
    c("pubinsert", BOOL),
    c("pubupdate", BOOL),
    c("pubdelete", BOOL),
    c("pubtruncate", BOOL),
    c("pubviaroot", BOOL),
];

pub(super) const PG_PUBLICATION_REL: &[ViewColumn] =
    &[c("oid", OID), c("prpubid", OID), c("prrelid", OID), c("prqual", NODE), c("prattrs", INT2V)];

pub(super) const PG_PUBLICATION_NAMESPACE: &[ViewColumn] =
    &[c("oid", OID), c("pnpubid", OID), c("pnnspid", OID)];

pub(super) const PG_TRIGGER: &[ViewColumn] = &[
    c("oid", OID),
    c("tgrelid", OID),
    c("tgparentid", OID),
    c("tgname", NAME),
    c("tgfoid", OID),
    c("tgtype", INT2),
    c("tgenabled", CHAR),
    c("tgisinternal", BOOL),
    c("tgconstrrelid", OID),
    c("tgconstrindid", OID),
    c("tgconstraint", OID),
    c("tgdeferrable", BOOL),
    c("tginitdeferred", BOOL),
    c("tgnargs", INT2),
    c("tgattr", INT2V),
    c("tgargs", SqlType::Bytea),
    c("tgqual", NODE),
    c("tgoldtable", NAME),
    c("tgnewtable", NAME),
];

pub(super) const PG_REWRITE: &[ViewColumn] = &[
    c("oid", OID),
    c("rulename", NAME),
    c("ev_class", OID),
    c("ev_type", CHAR),
    c("ev_enabled", CHAR),
    c("is_instead", BOOL),
    c("ev_qual", NODE),
    c("ev_action", NODE),
];

pub(super) const PG_EXTENSION: &[ViewColumn] = &[
    c("oid", OID),
    c("extname", NAME),
    c("extowner", OID),
    c("extnamespace", OID),
    c("extrelocatable", BOOL),
    c("extversion", TEXT),
    c("extconfig", OIDS),
    c("extcondition", TEXTS),
];

pub(super) const PG_ENUM: &[ViewColumn] =
    &[c("oid", OID), c("enumtypid", OID), c("enumsortorder", SqlType::Float4), c("enumlabel", NAME)];

pub(super) const PG_RANGE: &[ViewColumn] = &[
    c("rngtypid", OID),
    c("rngsubtype", OID),
    c("rngmultitypid", OID),
    c("rngcollation", OID),
    c("rngsubopc", OID),
    c("rngcanonical", REGPROC),
    c("rngsubdiff", REGPROC),
];

pub(super) const PG_DEPEND: &[ViewColumn] = &[
    c("classid", OID),
    c("objid", OID),
    c("objsubid", INT4),
    c("refclassid", OID),
    c("refobjid", OID),
    c("refobjsubid", INT4),
    c("deptype", CHAR),
];

pub(super) const PG_SETTINGS: &[ViewColumn] = &[
    c("name", TEXT),
    c("setting", TEXT),
    c("unit", TEXT),
    c("category", TEXT),
    c("short_desc", TEXT),
    c("extra_desc", TEXT),
    c("context", TEXT),
    c("vartype", TEXT),
    c("source", TEXT),
    c("min_val", TEXT),
    c("max_val", TEXT),
    c("enumvals", TEXTS),
    c("boot_val", TEXT),
    c("reset_val", TEXT),
    c("sourcefile", TEXT),
    c("sourceline", INT4),
    c("pending_restart", BOOL),
];

pub(super) const PG_TABLES: &[ViewColumn] = &[
    c("schemaname", NAME),
    c("tablename", NAME),
    c("tableowner", NAME),
    c("tablespace", NAME),
    c("hasindexes", BOOL),
    c("hasrules", BOOL),
    c("hastriggers", BOOL),
    c("rowsecurity", BOOL),
];

pub(super) const PG_INDEXES: &[ViewColumn] = &[
    c("schemaname", NAME),
    c("tablename", NAME),
    c("indexname", NAME),
    c("tablespace", NAME),
    c("indexdef", TEXT),
];

pub(super) const PG_VIEWS: &[ViewColumn] =
    &[c("schemaname", NAME), c("viewname", NAME), c("viewowner", NAME), c("definition", TEXT)];

pub(super) const PG_MATVIEWS: &[ViewColumn] = &[
    c("schemaname", NAME),
    c("matviewname", NAME),
    c("matviewowner", NAME),
    c("tablespace", NAME),
    c("hasindexes", BOOL),
    c("ispopulated", BOOL),
    c("definition", TEXT),
];

pub(super) const PG_SEQUENCES: &[ViewColumn] = &[
    c("schemaname", NAME),
    c("sequencename", NAME),
    c("sequenceowner", NAME),
    c("data_type", REGTYPE),
    c("start_value", INT8),
    c("min_value", INT8),
    c("max_value", INT8),
    c("increment_by", INT8),
    c("cycle", BOOL),
    c("cache_size", INT8),
    c("last_value", INT8),
];

pub(super) const PG_AGGREGATE: &[ViewColumn] = &[
    c("aggfnoid", REGPROC),
    c("aggkind", CHAR),
    c("aggnumdirectargs", INT2),
    c("aggtransfn", REGPROC),
    c("aggfinalfn", REGPROC),
    c("aggcombinefn", REGPROC),
    c("aggserialfn", REGPROC),
    c("aggdeserialfn", REGPROC),
    c("aggmtransfn", REGPROC),
    c("aggminvtransfn", REGPROC),
    c("aggmfinalfn", REGPROC),
    c("aggfinalextra", BOOL),
    c("aggmfinalextra", BOOL),
    c("aggfinalmodify", CHAR),
    c("aggmfinalmodify", CHAR),
    c("aggsortop", OID),
    c("aggtranstype", OID),
    c("aggtransspace", INT4),
    c("aggmtranstype", OID),
    c("aggmtransspace", INT4),
    c("agginitval", TEXT),
    c("aggminitval", TEXT),
];

pub(super) const PG_CAST: &[ViewColumn] = &[
    c("oid", OID),
    c("castsource", OID),
    c("casttarget", OID),
    c("castfunc", OID),
    c("castcontext", CHAR),
    c("castmethod", CHAR),
];

pub(super) const PG_CONVERSION: &[ViewColumn] = &[
    c("oid", OID),
    c("conname", NAME),
    c("connamespace", OID),
    c("conowner", OID),
    c("conforencoding", INT4),
    c("contoencoding", INT4),
    c("conproc", REGPROC),
    c("condefault", BOOL),
];

pub(super) const PG_EVENT_TRIGGER: &[ViewColumn] = &[
    c("oid", OID),
    c("evtname", NAME),
    c("evtevent", NAME),
    c("evtowner", OID),
    c("evtfoid", OID),
    c("evtenabled", CHAR),
    c("evttags", TEXTS),
];

pub(super) const PG_FOREIGN_DATA_WRAPPER: &[ViewColumn] = &[
    c("oid", OID),
    c("fdwname", NAME),
    c("fdwowner", OID),
    c("fdwhandler", OID),
    c("fdwvalidator", OID),
    c("fdwacl", ACL),
    c("fdwoptions", TEXTS),
];

pub(super) const PG_FOREIGN_SERVER: &[ViewColumn] = &[
    c("oid", OID),
    c("srvname", NAME),
    c("srvowner", OID),
    c("srvfdw", OID),
    c("srvtype", TEXT),
    c("srvversion", TEXT),
    c("srvacl", ACL),
    c("srvoptions", TEXTS),
];

pub(super) const PG_FOREIGN_TABLE: &[ViewColumn] =
    &[c("ftrelid", OID), c("ftserver", OID), c("ftoptions", TEXTS)];

pub(super) const PG_LANGUAGE: &[ViewColumn] = &[
    c("oid", OID),
    c("lanname", NAME),
    c("lanowner", OID),
    c("lanispl", BOOL),
    c("lanpltrusted", BOOL),
    c("lanplcallfoid", OID),
    c("laninline", OID),
    c("lanvalidator", OID),
    c("lanacl", ACL),
];

pub(super) const PG_OPCLASS: &[ViewColumn] = &[
    c("oid", OID),
    c("opcmethod", OID),
    c("opcname", NAME),
    c("opcnamespace", OID),
    c("opcowner", OID),
    c("opcfamily", OID),
    c("opcintype", OID),
    c("opcdefault", BOOL),
    c("opckeytype", OID),
];

pub(super) const PG_OPERATOR: &[ViewColumn] = &[
    c("oid", OID),
    c("oprname", NAME),
    c("oprnamespace", OID),
    c("oprowner", OID),
    c("oprkind", CHAR),
    c("oprcanmerge", BOOL),
    c("oprcanhash", BOOL),
    c("oprleft", OID),
    c("oprright", OID),
    c("oprresult", OID),
    c("oprcom", OID),
    c("oprnegate", OID),
    c("oprcode", REGPROC),
    c("oprrest", REGPROC),
    c("oprjoin", REGPROC),
];

pub(super) const PG_OPFAMILY: &[ViewColumn] =
    &[c("oid", OID), c("opfmethod", OID), c("opfname", NAME), c("opfnamespace", OID), c("opfowner", OID)];

pub(super) const PG_TS_CONFIG: &[ViewColumn] =
    &[c("oid", OID), c("cfgname", NAME), c("cfgnamespace", OID), c("cfgowner", OID), c("cfgparser", OID)];

pub(super) const PG_USER_MAPPING: &[ViewColumn] =
    &[c("oid", OID), c("umuser", OID), c("umserver", OID), c("umoptions", TEXTS)];

pub(super) const PG_STAT_ACTIVITY: &[ViewColumn] = &[
    c("datid", OID),
    c("datname", NAME),
    c("pid", INT4),
    c("leader_pid", INT4),
    c("usesysid", OID),
    c("usename", NAME),
    c("application_name", TEXT),
    c("client_addr", TEXT),
    c("client_hostname", TEXT),
    c("client_port", INT4),
    c("backend_start", TSTZ),
    c("xact_start", TSTZ),
    c("query_start", TSTZ),
    c("state_change", TSTZ),
    c("wait_event_type", TEXT),
    c("wait_event", TEXT),
    c("state", TEXT),
    c("backend_xid", XID),
    c("backend_xmin", XID),
    c("query_id", INT8),
    c("query", TEXT),
    c("backend_type", TEXT),
];

pub(super) const PG_STAT_SSL: &[ViewColumn] = &[
    c("pid", INT4),
    c("ssl", BOOL),
    c("version", TEXT),
    c("cipher", TEXT),
    c("bits", INT4),
    c("client_dn", TEXT),
    c("client_serial", SqlType::Numeric(-1)),
    c("issuer_dn", TEXT),
];

pub(super) const PG_CURSORS: &[ViewColumn] = &[
    c("name", TEXT),
    c("statement", TEXT),
    c("is_holdable", BOOL),
    c("is_binary", BOOL),
    c("is_scrollable", BOOL),
    c("creation_time", TSTZ),
];

pub(super) const PG_STAT_USER_TABLES: &[ViewColumn] = &[
    c("relid", OID),
    c("schemaname", NAME),
    c("relname", NAME),
    c("seq_scan", INT8),
    c("seq_tup_read", INT8),
    c("idx_scan", INT8),
    c("idx_tup_fetch", INT8),
    c("n_tup_ins", INT8),
    c("n_tup_upd", INT8),
    c("n_tup_del", INT8),
    c("n_tup_hot_upd", INT8),
    c("n_live_tup", INT8),
    c("n_dead_tup", INT8),
    c("n_mod_since_analyze", INT8),
    c("n_ins_since_vacuum", INT8),
    c("last_vacuum", TSTZ),
    c("last_autovacuum", TSTZ),
    c("last_analyze", TSTZ),
    c("last_autoanalyze", TSTZ),
    c("vacuum_count", INT8),
    c("autovacuum_count", INT8),
    c("analyze_count", INT8),
    c("autoanalyze_count", INT8),
];

pub(super) const PG_LOCKS: &[ViewColumn] = &[
    c("locktype", TEXT),
    c("database", OID),
    c("relation", OID),
    c("page", INT4),
    c("tuple", INT2),
    c("virtualxid", TEXT),
    c("transactionid", XID),
    c("classid", OID),
    c("objid", OID),
    c("objsubid", INT2),
    c("virtualtransaction", TEXT),
    c("pid", INT4),
    c("mode", TEXT),
    c("granted", BOOL),
    c("fastpath", BOOL),
    c("waitstart", TSTZ),
];

pub(super) const PG_STATISTIC: &[ViewColumn] = &[
    c("starelid", OID),
    c("staattnum", INT2),
    c("stainherit", BOOL),
    c("stanullfrac", REAL),
    c("stawidth", INT4),
    c("stadistinct", REAL),
    c("stakind1", INT2),
    c("stakind2", INT2),
    c("stakind3", INT2),
    c("stakind4", INT2),
    c("stakind5", INT2),
    c("staop1", OID),
    c("staop2", OID),
    c("staop3", OID),
    c("staop4", OID),
    c("staop5", OID),
    c("stacoll1", OID),
    c("stacoll2", OID),
    c("stacoll3", OID),
    c("stacoll4", OID),
    c("stacoll5", OID),
    c("stanumbers1", REALS),
    c("stanumbers2", REALS),
    c("stanumbers3", REALS),
    c("stanumbers4", REALS),
    c("stanumbers5", REALS),
    c("stavalues1", ANYARRAY),
    c("stavalues2", ANYARRAY),
    c("stavalues3", ANYARRAY),
    c("stavalues4", ANYARRAY),
    c("stavalues5", ANYARRAY),
];

pub(super) const PG_STATS: &[ViewColumn] = &[
    c("schemaname", NAME),
    c("tablename", NAME),
    c("attname", NAME),
    c("inherited", BOOL),
    c("null_frac", REAL),
    c("avg_width", INT4),
    c("n_distinct", REAL),
    c("most_common_vals", ANYARRAY),
    c("most_common_freqs", REALS),
    c("histogram_bounds", ANYARRAY),
    c("correlation", REAL),
    c("most_common_elems", ANYARRAY),
    c("most_common_elem_freqs", REALS),
    c("elem_count_histogram", REALS),
];

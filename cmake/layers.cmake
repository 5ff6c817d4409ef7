# The layers of aimem: which area of src/ may include which, and which files
# may touch the system. CMakeLists.txt builds one library per area and links
# it along these arrows; cmake/check_layers.cmake (run in every build, and as
# the `layers` test) reads every #include and every system call under src/
# against them. docs/ARCHITECTURE.md draws the same picture in words.
#
# Changing an arrow here changes the architecture: say why in the commit, and
# in docs/ARCHITECTURE.md.

# Every folder under src/ is one area (src/cli/commands is part of cli).
# Listed from the ground up.
set(AIMEM_AREAS core evidence recognize diagnose sources fit net watch probe check render cli tools)

# AIMEM_LAYER_<area>: the areas its files may include directly. What those
# reach may be included too (diagnose -> recognize -> evidence -> core: the
# diagnosis may include core). An include of the own area is always allowed.
set(AIMEM_LAYER_core "")                      # units, time, text, errors, cgroup paths, the taxonomy
set(AIMEM_LAYER_evidence core)                # facts, lines, the sink and store of facts
set(AIMEM_LAYER_recognize evidence)           # lines -> facts
set(AIMEM_LAYER_diagnose recognize)           # facts -> incidents, causes, fixes
set(AIMEM_LAYER_sources evidence)             # the outside world -> facts
set(AIMEM_LAYER_fit core)                     # bytes and a Hardware value -> plans
set(AIMEM_LAYER_net core)                     # aimem's own HTTP client and server
set(AIMEM_LAYER_watch sources diagnose net)   # samples, the recording, the exporter, alerts
set(AIMEM_LAYER_probe sources net watch)      # drives a server; records with watch's sampler and store
set(AIMEM_LAYER_check sources fit probe)      # deployment files -> findings (uses fit's plans, probe's limits)
# All output: text, JSON, HTML of every command's results. Above the areas whose
# results it writes; watch and probe, which store diagnoses in their events,
# are handed the JSON writer by the command (watch/diagnosis_body.h).
set(AIMEM_LAYER_render check probe watch diagnose fit)
set(AIMEM_LAYER_cli render check probe watch fit diagnose sources net)  # wires it all
set(AIMEM_LAYER_tools recognize)              # build-time generator of the pattern database

# Includes that break the arrows above today. Each is DEBT: a file and the
# area it may still include, with what should change ("src/FILE -> AREA: why").
# A new file, or another area for a listed file, still fails. Remove a line
# when its debt is paid. None is left today.
set(AIMEM_LAYER_DEBT)

# System calls: only src/sources/ opens files, lists folders, maps files,
# reads the environment or loads libraries. The check reads every line outside
# src/sources/ (comments left out) for these calls:
#   open     open()/openat() with O_ flags on the same line
#   fopen    fopen()
#   stream   std::ifstream / std::fstream
#   listdir  opendir(), fdopendir(), std::filesystem::(recursive_)directory_iterator
#   mmap     mmap()
#   getenv   getenv(), secure_getenv()
#   dlopen   dlopen()
# AIMEM_SYSTEM_CALLS_ALLOWED: "FILE CALL: why" for each file outside
# src/sources/ that still makes such a call. Entries marked DEBT read the
# system and should receive data from sources/ instead; entries marked OUTPUT
# write what the program produces (not reading the system). A new file, or a
# new kind of call in a listed file, fails the build.
set(AIMEM_SYSTEM_CALLS_ALLOWED
  "src/fit/gguf_writer.cc fopen: OUTPUT writes a GGUF file"
  "src/watch/alert_sink.cc open: OUTPUT appends alerts to the log file the user names"
  "src/watch/store.cc open: OUTPUT creates and checks the SQLite recording"
  "src/tools/pattern_db_gen.cc fopen: OUTPUT the build-time generator writes pattern_db.cc"
)

#pragma once
// Where clusters' state lives when no folder is named, and the state folders this user has deployed from:
// what lets `ddl list --all` show every cluster and a cluster named from another folder be found.
//
// The default folder is ./.ddl where it exists (a project's own folder is found first), else ~/.ddl (one
// folder for every shell and project, as SkyPilot's ~/.sky). $DDL_STATE_DIR and --state-dir win over both.
// Each deploy records its folder's absolute path, one per line, in $XDG_STATE_HOME/ddl/state-folders (else
// ~/.local/state/ddl/state-folders; 0600 in a 0700 folder), appended with one write so that deploys from
// several shells at once keep every line.

#include "util/Result.hpp"

#include <string>
#include <vector>

namespace ddl {

// ./.ddl where it is a folder, else $HOME/.ddl, else .ddl (no HOME).
std::string default_state_folder();

// The file that records the folders; empty when neither XDG_STATE_HOME nor HOME is set.
std::string known_folders_file();

// Records `root` (made absolute) unless it is there already.
Status remember_state_folder(const std::string& root);

// The recorded folders that still exist, each once, in the order they were first recorded.
std::vector<std::string> known_state_folders();

} // namespace ddl

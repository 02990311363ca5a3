#!/usr/bin/env bash
# The composite Action's one step: `docker run` skillab's image as GitHub runs a container action
# (the workspace, event, file commands and a fresh HOME under /github, the GITHUB_*, RUNNER_* and
# INPUT_* environment), plus the two options bubblewrap needs inside it and nothing broader:
#   seccomp=unconfined    Docker's profile refuses unshare/clone with namespace flags
#   systempaths=unconfined  Docker's masked /proc paths make bwrap's fresh /proc mount fail
# Everything else is tightened: the runner's own uid (it owns the workspace, so no capability is
# needed to drop to it), every capability dropped, no-new-privileges, the default AppArmor profile.
#
# Environment: SKILLAB_IMAGE (an image reference to run) or SKILLAB_DOCKERFILE and
# SKILLAB_CONTEXT (build that, as `using: docker` does on a branch). Values reach docker through
# its environment (`-e NAME`), never its argv, so no secret shows up in `ps`.
set -euo pipefail

# Passed through by name, as the runner passes them to a container action, except ACTIONS_*
# (runtime and OIDC tokens skillab has no use for). The paths GitHub rewrites for a container
# (/github/...) are set below instead.
PASS='^(GITHUB_|RUNNER_|INPUT_|SKILLAB_|ANTHROPIC_|OPENAI_|GEMINI_|GOOGLE_GEMINI_BASE_URL$|CI$)'
REWRITTEN='^(GITHUB_WORKSPACE|GITHUB_EVENT_PATH|GITHUB_OUTPUT|GITHUB_STEP_SUMMARY|GITHUB_ENV|GITHUB_PATH|GITHUB_STATE|SKILLAB_IMAGE|SKILLAB_DOCKERFILE|SKILLAB_CONTEXT)$'
SECURITY=(--security-opt seccomp=unconfined --security-opt systempaths=unconfined
          --security-opt no-new-privileges --cap-drop ALL --user "$(id -u):$(id -g)")

image=${SKILLAB_IMAGE:-}
if [ -z "$image" ]; then
  image=skillab-action:local
  docker build --quiet --tag "$image" --file "$SKILLAB_DOCKERFILE" "$SKILLAB_CONTEXT" >/dev/null
fi

# A HOME of its own, as /github/home is for a container action: the runner's HOME (with its
# docker and git credentials) is never mounted. RUNNER_TEMP is emptied when the job ends.
home=$(mktemp -d "${RUNNER_TEMP:-/tmp}/skillab-home.XXXXXX")
commands=$(dirname "$GITHUB_OUTPUT")
args=(--rm --workdir /github/workspace
      -v "$GITHUB_WORKSPACE:/github/workspace" -v "$home:/github/home"
      -v "$(dirname "$GITHUB_EVENT_PATH"):/github/workflow:ro"
      -v "$commands:/github/file_commands"
      -e HOME=/github/home -e GITHUB_WORKSPACE=/github/workspace
      -e "GITHUB_EVENT_PATH=/github/workflow/$(basename "$GITHUB_EVENT_PATH")")
for name in GITHUB_OUTPUT GITHUB_STEP_SUMMARY GITHUB_ENV GITHUB_PATH GITHUB_STATE; do
  file=${!name:-}
  # Every file command lives in one directory on the runner; one outside it is not forwarded.
  if [ -n "$file" ] && [ "$(dirname "$file")" = "$commands" ]; then
    args+=(-e "$name=/github/file_commands/$(basename "$file")")
  fi
done
while IFS= read -r -d '' entry; do
  name=${entry%%=*}
  if [[ $name =~ $PASS && ! $name =~ $REWRITTEN ]]; then args+=(-e "$name"); fi
done < <(env -0)

# exec: the runner's SIGINT/SIGTERM on cancel reach docker, which forwards them to tini.
exec docker run "${SECURITY[@]}" "${args[@]}" "$image"

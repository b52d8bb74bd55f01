# ./run images [--full] [--tag TAG] [--base IMAGE] [--push REGISTRY]: builds the container images
# ghcr.io/cloneset-cpp/cloneset-{planner,executor,agent,devcluster} from deploy/Dockerfile with BuildKit (docker
# buildx; ./run docker ensure starts a daemon when none answers) and prints their names and sizes; also
# ghcr.io/cloneset-cpp/cloneset-prometheus (deploy/prometheus/Dockerfile) for docker-compose.yml.
#   (default)        copies the binaries of `./run build` (built when missing; run `./run build` after a change)
#                    into the runtime stages: seconds once the base and its runtime libraries are cached
#   --full           compiles them instead in the Dockerfile's build stage, once for all four (exported with
#                    --output type=local), then builds the same runtime stages from them (long: docs/deployment.md
#                    gives the measured time)
#   --tag TAG        the tag (default: the chart's appVersion and "dev", the tag docker-compose.yml defaults to)
#   --base IMAGE     the Debian bookworm image the stages start from. Default: debian:bookworm-slim when the
#                    daemon has it, else cloneset-debian:bookworm-minbase, made here once with debootstrap from
#                    the Debian mirror (CLONESET_DEBIAN_MIRROR) and `docker import`; nothing is pulled from a
#                    registry unless IMAGE is given and not present locally
#   --push REGISTRY  also tags REGISTRY/cloneset-<component>:TAG and pushes them
# Build logs: $BUILD_DIR/images/<component>.log.
# shellcheck source=/dev/null
source "$ROOT/tools/run.d/docker.sh"

IMAGES_COMPONENTS=(planner executor agent devcluster)
# The repository charts/cloneset/values.yaml (image.registry) and docker-compose.yml (image:) name.
IMAGES_REPOSITORY=ghcr.io/cloneset-cpp
IMAGES_OFFICIAL_BASE=debian:bookworm-slim
IMAGES_LOCAL_BASE=cloneset-debian:bookworm-minbase
CLONESET_DEBIAN_MIRROR="${CLONESET_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CLONESET_DEBIAN_SECURITY_MIRROR="${CLONESET_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# debootstrap downloads and unpacks ~90 packages: ~1.5 min here.
IMAGES_DEBOOTSTRAP_SECONDS=900

# _images_make_base: the Debian bookworm base as IMAGES_LOCAL_BASE: debootstrap's minbase variant (what
# debian:bookworm-slim is made of: essential packages and apt) with the official image's apt sources, no package
# lists or downloaded packages.
_images_make_base() {
  local missing; missing=$(missing_packages debootstrap)
  if [ -n "$missing" ]; then
    log "images: installing debootstrap (makes the Debian base image)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2 ||
      { echo "images: installing debootstrap with apt failed" >&2; return 1; }
  fi
  local tmp; tmp=$(mktemp -d /var/tmp/cloneset-debian-base.XXXXXX)
  log "images: making $IMAGES_LOCAL_BASE with debootstrap from $CLONESET_DEBIAN_MIRROR (once; log $tmp.log)"
  local start=$SECONDS
  if ! as_root timeout "$IMAGES_DEBOOTSTRAP_SECONDS" debootstrap --variant=minbase bookworm "$tmp/root" \
      "$CLONESET_DEBIAN_MIRROR" >"$tmp.log" 2>&1; then
    echo "images: debootstrap of bookworm from $CLONESET_DEBIAN_MIRROR failed or took over" \
      "$IMAGES_DEBOOTSTRAP_SECONDS s; the end of $tmp.log:" >&2
    tail -n 15 "$tmp.log" >&2
    as_root rm -rf "$tmp"
    return 1
  fi
  as_root rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* \
    "$tmp/root/etc/apt/sources.list"
  as_root tee "$tmp/root/etc/apt/sources.list.d/debian.sources" >/dev/null <<EOF
Types: deb
URIs: $CLONESET_DEBIAN_MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $CLONESET_DEBIAN_SECURITY_MIRROR
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  as_root tar --numeric-owner -C "$tmp/root" -c . |
    docker import --change 'CMD ["bash"]' --message "debootstrap --variant=minbase bookworm" - \
      "$IMAGES_LOCAL_BASE" >/dev/null
  local rc=$?
  as_root rm -rf "$tmp" "$tmp.log"
  [ "$rc" -eq 0 ] || { echo "images: docker import of the debootstrapped tree failed" >&2; return 1; }
  log "images: made $IMAGES_LOCAL_BASE in $((SECONDS - start)) s"
}

# images_base: prints the base image to build from (see --base above), making the local one when needed.
images_base() {
  if docker image inspect "$IMAGES_OFFICIAL_BASE" >/dev/null 2>&1; then echo "$IMAGES_OFFICIAL_BASE"; return; fi
  # One maker at a time: a second ./run images waits and then finds it.
  local lock="$HOME/.cache/cloneset/images-base.lock" fd
  mkdir -p "$(dirname "$lock")"
  exec {fd}>"$lock"
  flock -w "$((IMAGES_DEBOOTSTRAP_SECONDS + 60))" "$fd" ||
    { echo "images: waited for another ./run making $IMAGES_LOCAL_BASE ($lock)" >&2; exec {fd}>&-; return 1; }
  local rc=0
  docker image inspect "$IMAGES_LOCAL_BASE" >/dev/null 2>&1 || _images_make_base || rc=$?
  exec {fd}>&-
  [ "$rc" -eq 0 ] && echo "$IMAGES_LOCAL_BASE"
}

# _images_build FULL BASE LOGS WORK CONTEXT TAG...: fills CONTEXT with the binaries (compiled in Docker when FULL is
# 1, else from $BUILD_DIR/bin) and builds the images of IMAGES_COMPONENTS and Prometheus with the TAGs, each
# build's log in LOGS (a failure prints its end; run_images moves them to $BUILD_DIR/images).
_images_build() {
  local full="$1" base="$2" logs="$3" work="$4" context="$5" start=$SECONDS c t; shift 5
  local tags=("$@")
  if [ "$full" = 1 ]; then
    # Compiled once, in one build from one snapshot of the repository, and exported here; the four images are
    # then made from it as from prebuilt binaries. (One build per target would compile again for every target
    # whose context differs by a file edited in between.)
    log "images: compiling the binaries in the Dockerfile's build stage (base $base; log $logs/compile.log)"
    docker buildx build -f "$ROOT/deploy/Dockerfile" --target binaries-compiled --build-arg "DEBIAN=$base" \
      --progress=plain --output "type=local,dest=$work/compiled" "$ROOT" 2>&1 | tee "$logs/compile.log" >&2
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "images: compiling in Docker failed (log $logs/compile.log)" >&2; return 1; }
    mv "$work/compiled/binaries" "$context"
    rm -rf "$work/compiled"
    log "images: compiled in $((SECONDS - start)) s"
  else
    local targets=() missing=()
    for c in "${IMAGES_COMPONENTS[@]}"; do
      targets+=("cloneset-$c")
      [ -x "$BUILD_DIR/bin/cloneset-$c" ] || missing+=("cloneset-$c")
    done
    if [ ${#missing[@]} -gt 0 ]; then
      cmd_build --target "${missing[@]}" >&2 || { echo "images: building ${missing[*]} failed" >&2; return 1; }
    fi
    log "images: binaries of $(date -r "$BUILD_DIR/bin/cloneset-executor" '+%F %T') from $BUILD_DIR/bin" \
      "(./run build refreshes them)"
    mkdir -p "$context"
    for c in "${targets[@]}"; do
      # Hard links when possible: no copy of the binaries.
      ln -f "$BUILD_DIR/bin/$c" "$context/$c" 2>/dev/null || cp -f "$BUILD_DIR/bin/$c" "$context/$c"
    done
  fi

  local from; from=$([ "$full" = 1 ] && echo "compiled in Docker" || echo "from $BUILD_DIR/bin")
  for c in "${IMAGES_COMPONENTS[@]}"; do
    local args=(-f "$ROOT/deploy/Dockerfile" --target "$c" --build-arg "DEBIAN=$base"
      --build-arg "BINARIES=prebuilt" --progress=plain)
    for t in "${tags[@]}"; do args+=(-t "$IMAGES_REPOSITORY/cloneset-$c:$t"); done
    log "images: cloneset-$c (binaries $from, base $base)"
    _images_buildx "$logs/$c.log" "${args[@]}" "$context" || return 1
  done
  # docker-compose.yml's Prometheus: Debian's package on the same base (deploy/prometheus/Dockerfile; not pushed).
  local prom=(-f "$ROOT/deploy/prometheus/Dockerfile" --build-arg "DEBIAN=$base" --progress=plain)
  for t in "${tags[@]}"; do prom+=(-t "$IMAGES_REPOSITORY/cloneset-prometheus:$t"); done
  log "images: cloneset-prometheus (Debian's prometheus package, base $base)"
  _images_buildx "$logs/prometheus.log" "${prom[@]}" "$ROOT/deploy/prometheus"
}

# _images_buildx LOG ARGS...: docker buildx build ARGS into LOG; on failure, the end of LOG on stderr.
_images_buildx() {
  local log_file="$1"; shift
  docker buildx build "$@" >"$log_file" 2>&1 && return 0
  echo "images: building cloneset-$(basename "$log_file" .log) failed; the end of $log_file:" >&2
  tail -n 25 "$log_file" >&2
  return 1
}

run_images() {
  local full=0 tag="" base="" push=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --full) full=1; shift ;;
      --tag|--base|--push)
        [ $# -ge 2 ] && [ -n "$2" ] || { echo "images: $1 needs a value" >&2; return 2; }
        case "$1" in --tag) tag="$2" ;; --base) base="$2" ;; --push) push="${2%/}" ;; esac
        shift 2 ;;
      --tag=*) tag="${1#*=}"; shift ;;
      --base=*) base="${1#*=}"; shift ;;
      --push=*) push="${1#*=}"; push="${push%/}"; shift ;;
      -h|--help) sed -n '/^#/!q; /^# shellcheck/d; s/^# \{0,1\}//p' "$ROOT/tools/run.d/images.sh"; return 0 ;;
      *) echo "images: unknown option $1 (./run images --help)" >&2; return 2 ;;
    esac
  done
  local tags=()
  if [ -n "$tag" ]; then
    tags=("$tag")
  else
    local app; app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$ROOT/charts/cloneset/Chart.yaml")
    [ -n "$app" ] || { echo "images: no appVersion in charts/cloneset/Chart.yaml" >&2; return 1; }
    tags=("$app" dev)
  fi
  local t
  for t in "${tags[@]}"; do
    [[ "$t" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || { echo "images: --tag '$t' is not a valid tag" >&2; return 2; }
  done

  docker_ensure || return 1
  [ -n "$base" ] || base=$(images_base) || return 1

  local logs="$BUILD_DIR/images" start=$SECONDS c
  mkdir -p "$logs"
  # The images' build context: only the four binaries. Private to this run: two ./run images at once (parallel
  # tests) must not empty each other's context while the daemon reads it.
  local work; work=$(mktemp -d "$logs/run-XXXXXX")
  local context="$work/context" rc=0 f
  _images_build "$full" "$base" "$work" "$work" "$context" "${tags[@]}" || rc=$?
  # The logs are written privately too and then renamed to $logs/<name>.log (the last run's, whole).
  for f in "$work"/*.log; do [ ! -f "$f" ] || mv -f "$f" "$logs/"; done
  rm -rf "$work"
  [ "$rc" -eq 0 ] || return "$rc"
  log "images: built in $((SECONDS - start)) s"

  if [ -n "$push" ]; then
    for c in "${IMAGES_COMPONENTS[@]}"; do
      for t in "${tags[@]}"; do
        docker tag "$IMAGES_REPOSITORY/cloneset-$c:$t" "$push/cloneset-$c:$t" &&
          docker push "$push/cloneset-$c:$t" >&2 || { echo "images: pushing $push/cloneset-$c:$t failed" >&2; return 1; }
      done
    done
  fi

  local size
  for c in "${IMAGES_COMPONENTS[@]}"; do
    size=$(docker image inspect -f '{{.Size}}' "$IMAGES_REPOSITORY/cloneset-$c:${tags[0]}")
    printf '%-50s %6s MB%s\n' "$IMAGES_REPOSITORY/cloneset-$c:${tags[0]}" "$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')" \
      "$([ ${#tags[@]} -gt 1 ] && echo "  (also :${tags[*]:1})")"
    [ -z "$push" ] || for t in "${tags[@]}"; do echo "  pushed $push/cloneset-$c:$t"; done
  done
}

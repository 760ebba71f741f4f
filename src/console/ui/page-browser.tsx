/**
 * The object browser: folders and objects under a prefix, a page at a time; filter; upload files
 * and folders (picker or drag and drop) with a progress bar per file; download; delete a
 * selection; an object's details with its versions, and share links.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, apiUrl, ApiError } from './api';
import { Badge, Card, ConfirmDialog, Empty, ErrorNotice, GuardedButton, ProgressBar, usePoll, ActionsHead } from './components';
import { permissionReason, useBucketPermissions } from './permissions';
import { bytes, duration, percent, when } from './format';
import { bucketHref } from './page-buckets';
import { droppedFiles, pace, startUpload, type UploadTask } from './upload';
import { ObjectDetails, type ObjectVersion } from './page-object';
import { isKeyOrder, listHash, Pager, readListAddress, SortHeader, useHashQuery, type ListAddress } from './browser-paging';
import { CreateFolderDialog, DeleteFolderDialog } from './folder-actions';

interface ListPage {
  prefix: string;
  folders: string[];
  objects: ObjectVersion[];
  next?: string;
  nextOffset?: number;
  /** Left out of a refresh whose total is known (`count=false`). */
  total?: number;
  totalCapped?: boolean;
}

function Breadcrumbs(props: { bucket: string; prefix: string }) {
  const parts = props.prefix.split('/').filter((part) => part !== '');
  return (
    <nav class="breadcrumbs" aria-label="Location">
      <a href="#/buckets">Buckets</a>
      <span aria-hidden="true">/</span>
      <a href={bucketHref(props.bucket)}>{props.bucket}</a>
      {parts.map((part, index) => (
        <span key={index} class="crumb">
          <span aria-hidden="true">/</span>
          <a href={bucketHref(props.bucket, `${parts.slice(0, index + 1).join('/')}/`)}>{part}</a>
        </span>
      ))}
    </nav>
  );
}

type FileToUpload = { path: string; file: File };

export function BrowserPage(props: { bucket: string; prefix: string }) {
  const { bucket, prefix } = props;
  const [showDeleted, setShowDeleted] = useState(false);
  const address = readListAddress(useHashQuery());
  const [filter, setFilterText] = useState(address.filter);
  const pageSize = address.size;
  const keyOrder = isKeyOrder(address);
  const after = keyOrder ? address.after : undefined;
  const pageNumber = keyOrder ? (after === undefined ? 1 : Math.max(2, address.page)) : address.page;
  /** The cursors of the pages before this one, as far as this visit knows them. */
  const [cursors, setCursors] = useState<(string | undefined)[]>([]);
  const base = bucketHref(bucket, prefix).slice(1);
  /** Another view of this folder: its size, order and filter stay unless changed; the page is the first unless named. */
  const goTo = (next: Partial<ListAddress>) => {
    location.hash = listHash(base, { size: pageSize, sort: address.sort, order: address.order, filter, page: 1, ...next });
  };
  const setFilter = (value: string) => {
    setFilterText(value);
    // Typing keeps one history entry: the address follows the filter without a page change per key.
    history.replaceState(null, '', `#${listHash(base, { ...address, after: undefined, page: 1, filter: value })}`);
  };
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [details, setDetails] = useState<string | undefined>(undefined);
  const [uploads, setUploads] = useState<UploadTask[]>([]);
  const [storageClass, setStorageClass] = useState('STANDARD');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [folderAction, setFolderAction] = useState<{ kind: 'create' } | { kind: 'delete'; folder: string } | undefined>(undefined);
  const listPrefix = `${prefix}${filter}`;
  // The folder's total is counted once per folder and filter (and after a change made here), not on every refresh.
  const countKey = JSON.stringify([bucket, listPrefix, showDeleted]);
  const counted = useRef<{ key: string; total: number; capped: boolean } | undefined>(undefined);
  const { data, error, reload: reloadList } = usePoll(
    async () => {
      const view = keyOrder ? { after } : { sort: address.sort, order: address.order, offset: String((pageNumber - 1) * pageSize) };
      const known = keyOrder && counted.current?.key === countKey ? counted.current : undefined;
      const answer = await api<ListPage>('GET', `buckets/${encodeURIComponent(bucket)}/objects`, { query: { prefix: listPrefix, limit: String(pageSize), deleted: showDeleted ? 'true' : undefined, count: known ? 'false' : undefined, ...view } });
      if (answer.total !== undefined) counted.current = { key: countKey, total: answer.total, capped: answer.totalCapped === true };
      return answer.total === undefined && known ? { ...answer, total: known.total, totalCapped: known.capped } : answer;
    },
    15_000,
    [bucket, listPrefix, after, pageSize, showDeleted, address.sort, address.order, pageNumber],
  );
  const reload = () => {
    counted.current = undefined;
    reloadList();
  };
  const permissions = useBucketPermissions(bucket, prefix);
  // A folder that cannot be listed (no such bucket, no permission) offers nothing to do in it.
  const unlisted = error !== undefined && data === undefined ? 'This folder could not be listed.' : undefined;
  const uploadReason = unlisted ?? permissionReason(permissions, 'putObject');
  const deleteReason = unlisted ?? permissionReason(permissions, 'deleteObject');
  const firstRun = useRef(true);
  useEffect(() => {
    setCursors([]);
    setSelected(new Set());
    setDetails(undefined);
    // Another filter or view starts at its first page (the address's page counts only on arrival).
    if (!firstRun.current && pageNumber > 1) goTo({});
    firstRun.current = false;
  }, [bucket, prefix, filter, showDeleted, address.sort, address.order, pageSize]);

  const upload = (files: FileToUpload[]) => {
    let finished = 0;
    const tasks = files.map(({ path, file }) =>
      startUpload(bucket, `${prefix}${path}`, file, storageClass, (task) => {
        setUploads((list) => [...list]);
        if (task.state !== 'uploading' && task.state !== 'queued' && ++finished === files.length) reload();
      }),
    );
    setUploads((list) => [...tasks, ...list]);
  };
  const deleteSelected = async () => {
    setConfirmDelete(false);
    try {
      const answer = await api<{ results: { key: string; error?: { Code: string; Message: string } }[] }>('POST', `buckets/${encodeURIComponent(bucket)}/delete`, { body: { objects: [...selected].map((key) => ({ key })) } });
      const failed = answer.results.filter((result) => result.error);
      if (failed.length > 0) setActionError(new ApiError(0, failed[0]!.error!.Code, `${failed.length} object(s) not deleted: ${failed[0]!.error!.Message}`));
      setSelected(new Set());
      reload();
    } catch (caught) {
      setActionError(caught);
    }
  };

  const sortReason = data?.totalCapped ? 'This folder holds more than 10,000 entries: only name order is offered.' : undefined;
  const pagerProps = {
    first: (pageNumber - 1) * pageSize + 1,
    count: data ? data.folders.length + data.objects.length : undefined,
    total: data?.total !== undefined ? { count: data.total, capped: data.totalCapped === true } : undefined,
    failed: unlisted !== undefined,
    address: { ...address, filter },
    sortReason,
    onView: goTo,
    onPrevious:
      pageNumber <= 1
        ? undefined
        : !keyOrder
          ? () => goTo({ page: pageNumber - 1 })
          : () => {
              // Back one page when this visit knows its cursor, else to the first page.
              const known = cursors.length > 0 ? cursors[cursors.length - 1] : undefined;
              setCursors(cursors.slice(0, -1));
              goTo(cursors.length > 0 ? { after: known, page: pageNumber - 1 } : {});
            },
    onNext: !keyOrder
      ? data?.nextOffset !== undefined
        ? () => goTo({ page: pageNumber + 1 })
        : undefined
      : data?.next
        ? () => {
            setCursors([...cursors, after]);
            goTo({ after: data.next, page: pageNumber + 1 });
          }
        : undefined,
  };
  return (
    <div class="page">
      <Breadcrumbs bucket={bucket} prefix={prefix} />
      <h1 class="title-row">
        <span class="truncate">{prefix ? prefix.split('/').filter(Boolean).at(-1) : bucket}</span>
      </h1>
      <Toolbar filter={filter} onFilter={setFilter} storageClass={storageClass} onStorageClass={setStorageClass} selectedCount={selected.size} onDelete={() => setConfirmDelete(true)} onFiles={upload} onCreateFolder={() => setFolderAction({ kind: 'create' })} uploadReason={uploadReason} deleteReason={deleteReason} />
      {uploads.length > 0 ? <Uploads tasks={uploads} onClear={() => setUploads(uploads.filter((task) => task.state === 'uploading' || task.state === 'queued'))} /> : null}
      <ErrorNotice error={actionError ?? error} onClose={() => setActionError(undefined)} />
      <div class={`browser ${details ? 'with-details' : ''}`}>
        <Card
          title="Objects"
          actions={
            <label class="check">
              <input type="checkbox" checked={showDeleted} onChange={() => setShowDeleted(!showDeleted)} /> Show deleted
            </label>
          }
        >
          <Pager place="above" {...pagerProps} />
          {data ? <ObjectTable bucket={bucket} prefix={prefix} page={data} filtered={filter !== ''} selected={selected} onSelect={setSelected} details={details} onDetails={setDetails} address={address} sortable={sortReason === undefined} onView={goTo} onDeleteFolder={deleteReason === undefined ? (folder) => setFolderAction({ kind: 'delete', folder }) : undefined} /> : null}
          <Pager place="below" {...pagerProps} />
        </Card>
        {details ? <ObjectDetails bucket={bucket} objectKey={details} onClose={() => setDetails(undefined)} onChanged={reload} /> : null}
      </div>
      {folderAction?.kind === 'create' ? (
        <CreateFolderDialog
          bucket={bucket}
          prefix={prefix}
          onClose={() => setFolderAction(undefined)}
          onCreated={() => {
            setFolderAction(undefined);
            reload();
          }}
        />
      ) : null}
      {folderAction?.kind === 'delete' ? (
        <DeleteFolderDialog
          bucket={bucket}
          folder={folderAction.folder}
          onClose={() => setFolderAction(undefined)}
          onDeleted={() => {
            setFolderAction(undefined);
            reload();
          }}
        />
      ) : null}
      {confirmDelete ? (
        <ConfirmDialog title={`Delete ${selected.size} object(s)?`} confirmLabel="Delete" danger onConfirm={deleteSelected} onCancel={() => setConfirmDelete(false)}>
          <p>On a versioned bucket this adds delete markers (earlier versions stay); otherwise the objects are removed for good.</p>
          <ul class="key-list">
            {[...selected].slice(0, 10).map((key) => (
              <li key={key}>{key}</li>
            ))}
            {selected.size > 10 ? <li class="muted">and {selected.size - 10} more</li> : null}
          </ul>
        </ConfirmDialog>
      ) : null}
    </div>
  );
}

/** Filter, storage class, upload (files, a folder, or dropped on it) and delete. */
function Toolbar(props: { filter: string; onFilter: (value: string) => void; storageClass: string; onStorageClass: (value: string) => void; selectedCount: number; onDelete: () => void; onFiles: (files: FileToUpload[]) => void; onCreateFolder: () => void; uploadReason: string | undefined; deleteReason: string | undefined }) {
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  useEffect(() => folderInput.current?.setAttribute('webkitdirectory', ''), []);
  const fromInput = (input: HTMLInputElement | null) => {
    if (!input?.files) return;
    props.onFiles([...input.files].map((file) => ({ path: file.webkitRelativePath || file.name, file })));
    input.value = '';
  };
  const onDrop = async (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (event.dataTransfer && props.uploadReason === undefined) props.onFiles(await droppedFiles(event.dataTransfer.items));
  };
  return (
    <div
      class={`dropzone ${dragging ? 'dragging' : ''}`}
      onDragOver={(event) => {
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <div class="toolbar">
        <label class="field compact grow">
          <span>Filter by prefix</span>
          <input type="search" value={props.filter} placeholder="name starts with…" onInput={(event) => props.onFilter((event.target as HTMLInputElement).value)} spellcheck={false} />
        </label>
        <label class="field compact">
          <span>Storage class</span>
          <select value={props.storageClass} onChange={(event) => props.onStorageClass((event.target as HTMLSelectElement).value)}>
            <option value="STANDARD">STANDARD</option>
            <option value="REDUCED_REDUNDANCY">REDUCED_REDUNDANCY</option>
          </select>
        </label>
        <div class="toolbar-buttons">
          <GuardedButton id="upload-files" class="primary" reason={props.uploadReason} onClick={() => fileInput.current?.click()}>
            Upload files
          </GuardedButton>
          {props.uploadReason === undefined ? (
            <button class="button" type="button" onClick={() => folderInput.current?.click()}>
              Upload folder
            </button>
          ) : null}
          {props.uploadReason === undefined ? (
            <button class="button" type="button" onClick={props.onCreateFolder}>
              Create folder
            </button>
          ) : null}
          <GuardedButton id="delete-selected" class="danger" reason={props.deleteReason} extraDisabled={props.selectedCount === 0} onClick={props.onDelete}>
            Delete{props.selectedCount > 0 ? ` (${props.selectedCount})` : ''}
          </GuardedButton>
        </div>
        <input ref={fileInput} class="sr-only" type="file" multiple aria-label="Files to upload" tabIndex={-1} disabled={props.uploadReason !== undefined} data-testid="file-input" onChange={() => fromInput(fileInput.current)} />
        <input ref={folderInput} class="sr-only" type="file" multiple aria-label="Folder to upload" tabIndex={-1} disabled={props.uploadReason !== undefined} data-testid="folder-input" onChange={() => fromInput(folderInput.current)} />
      </div>
      {props.uploadReason === undefined ? <p class="muted small drop-hint">Drop files or folders here to upload them into this folder.</p> : null}
    </div>
  );
}

/** One page of folders and objects, with selection and a details button per object. */
function ObjectTable(props: { bucket: string; prefix: string; page: ListPage; filtered: boolean; selected: Set<string>; onSelect: (keys: Set<string>) => void; details: string | undefined; onDetails: (key: string) => void; address: ListAddress; sortable: boolean; onView: (next: Partial<ListAddress>) => void; onDeleteFolder: ((folder: string) => void) | undefined }) {
  const { bucket, prefix, page, selected } = props;
  const objects = page.objects;
  if (page.folders.length === 0 && objects.length === 0) return <Empty>{props.filtered ? 'Nothing matches this filter.' : 'This folder is empty. Upload files or drop them here.'}</Empty>;
  const allSelected = objects.length > 0 && objects.every((object) => selected.has(object.key));
  const toggle = (key: string) => {
    const next = new Set(selected);
    if (next.has(key)) next.delete(key);
    else next.add(key);
    props.onSelect(next);
  };
  return (
    <table class="table objects">
      <thead>
        <tr>
          <th class="check-col">
            <input type="checkbox" aria-label="Select all on this page" checked={allSelected} onChange={() => props.onSelect(allSelected ? new Set() : new Set(objects.map((object) => object.key)))} />
          </th>
          <SortHeader field="name" address={props.address} onView={props.onView} />
          <SortHeader field="size" class="num" address={props.address} disabled={!props.sortable} onView={props.onView} />
          <SortHeader field="modified" class="hide-narrow" address={props.address} disabled={!props.sortable} onView={props.onView} />
          <th class="hide-narrow class-col">Class</th>
          <ActionsHead />
        </tr>
      </thead>
      <tbody>
        {page.folders.map((folder) => (
          <tr key={`folder:${folder}`}>
            <td class="check-col" />
            <td colSpan={5}>
              <div class="folder-row">
                <a class="folder" href={bucketHref(bucket, folder)}>
                  <span class="icon-folder" aria-hidden="true" />
                  {folder.slice(prefix.length)}
                </a>
                {props.onDeleteFolder ? (
                  <button class="button small danger" type="button" aria-label={`Delete folder ${folder.slice(prefix.length)}`} onClick={() => props.onDeleteFolder?.(folder)}>
                    Delete
                  </button>
                ) : null}
              </div>
            </td>
          </tr>
        ))}
        {objects.map((object) => (
          <tr key={object.key} class={props.details === object.key ? 'selected' : ''}>
            <td class="check-col">
              <input type="checkbox" aria-label={`Select ${object.key.slice(prefix.length)}`} checked={selected.has(object.key)} onChange={() => toggle(object.key)} />
            </td>
            <td class="name-cell">
              <button class="link name" type="button" onClick={() => props.onDetails(object.key)} title={object.key}>
                {object.key.slice(prefix.length)}
              </button>
              {object.deleteMarker ? <Badge state="deleted" /> : null}
            </td>
            <td class="num">{object.deleteMarker ? '–' : bytes(object.sizeBytes)}</td>
            <td class="hide-narrow nowrap">{when(object.lastModified)}</td>
            <td class="hide-narrow small class-col">{object.storageClass}</td>
            <td class="actions-col">
              {object.deleteMarker ? null : (
                <a class="button small" href={apiUrl(`buckets/${encodeURIComponent(bucket)}/download`, { key: object.key })} download>
                  Download
                </a>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Speed and time left of an upload in flight. */
function PaceText(props: { task: UploadTask }) {
  const now = pace(props.task);
  if (!now) return null;
  return (
    <span class="upload-pace">
      {' · '}
      {bytes(now.bytesPerSecond)}/s · {duration(now.secondsLeft * 1000)} left
    </span>
  );
}

function Uploads(props: { tasks: UploadTask[]; onClear: () => void }) {
  return (
    <Card
      title="Uploads"
      class="uploads"
      actions={
        <button class="button small" type="button" onClick={props.onClear}>
          Clear finished
        </button>
      }
    >
      <ul class="upload-list">
        {props.tasks.map((task) => (
          <li key={task.id} class={`upload ${task.state}`} data-state={task.state}>
            <div class="upload-row">
              <span class="truncate" title={task.key}>
                {task.key}
              </span>
              <span class="muted small">
                {bytes(task.sentBytes)} / {bytes(task.sizeBytes)}
                {task.multipart ? ' · multipart' : ''}
                <PaceText task={task} />
              </span>
              <Badge state={task.state} />
              {task.state === 'uploading' || task.state === 'queued' ? (
                <button class="button small" type="button" onClick={task.cancel} aria-label={`Cancel upload of ${task.key}`}>
                  Cancel
                </button>
              ) : null}
            </div>
            <ProgressBar value={percent(task.sentBytes, task.sizeBytes || 1)} label={`Upload of ${task.key}`} tone={task.state === 'failed' ? 'bad' : task.state === 'done' ? 'ok' : undefined} />
            {task.error ? <div class="field-error">{task.error}</div> : null}
          </li>
        ))}
      </ul>
    </Card>
  );
}

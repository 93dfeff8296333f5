import { ErrorMessage, Loaded, PageHeader } from '../components/common.js';
import { DataTable } from '../components/data-table.js';
import { useApp } from '../context.js';
import { formatInteger } from '../format.js';
import type { ModelView } from '../types.js';
import { useAsync } from '../use-async.js';

/** The models this account may call: the same list its keys get from /v1/models (before a key's own narrowing). */
export function ModelsPage(props: { accountId: string }) {
  const { api } = useApp();
  const models = useAsync(() => api.get<ModelView[]>(`/accounts/${props.accountId}/models`), [props.accountId]);
  const price = (value: number | undefined) => (value === undefined ? '–' : `$${value.toFixed(value < 1 ? 3 : 2)}`);
  return (
    <>
      <PageHeader
        title="Models"
        description={
          <>
            What this account's keys may call, exactly as <code>GET /v1/models</code> lists it. A key created with a
            narrower list sees only those.
          </>
        }
      />
      <ErrorMessage error={models.error} />
      <Loaded state={models}>
        {(list) =>
          list.length === 0 ? (
            <p class="empty">This account may not call any model yet. Ask the operator to allow some.</p>
          ) : (
            <DataTable label="Models">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Provider</th>
                  <th scope="col" class="number">
                    Context window
                  </th>
                  <th scope="col" class="number">
                    Input / 1M tokens
                  </th>
                  <th scope="col" class="number">
                    Output / 1M tokens
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((model) => (
                  <tr key={model.id}>
                    <td class="wrap-anywhere">
                      <code>{model.id}</code>
                    </td>
                    <td data-label="Provider">
                      {model.provider} <span class="muted small">({model.providerType})</span>
                    </td>
                    <td class="number" data-label="Context window">
                      {model.contextWindow === null ? (
                        <span class="muted">–</span>
                      ) : (
                        `${formatInteger(model.contextWindow)} tokens`
                      )}
                    </td>
                    <td class="number" data-label="Input / 1M tokens">
                      {price(model.pricing?.inputPerMillion)}
                    </td>
                    <td class="number" data-label="Output / 1M tokens">
                      {price(model.pricing?.outputPerMillion)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </DataTable>
          )
        }
      </Loaded>
    </>
  );
}

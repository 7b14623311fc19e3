import type { Columns } from './csvColumns.js'

/** The languages a tool's exporter writes its headers in that tapgate reads (issue 25). */
export type Language = 'en' | 'de' | 'fr' | 'es' | 'nl' | 'it'

export const LANGUAGES: readonly Language[] = ['en', 'de', 'fr', 'es', 'nl', 'it']

export const LANGUAGE_NAMES: Record<Language, string> = { en: 'English', de: 'German', fr: 'French', es: 'Spanish', nl: 'Dutch', it: 'Italian' }

/**
 * A tool's headers: for each column the reader asks for by its English name, what the exporter writes
 * in each language (several spellings: any of them). A language left out writes the English name (the
 * catalogue has no translation, or only a fuzzy one, which gettext leaves out).
 */
export type HeaderTable = Record<string, { en: readonly string[] } & Partial<Record<Exclude<Language, 'en'>, readonly string[]>>>

const t = (en: string | readonly string[], de: string, fr: string, es: string, nl: string, it: string | null) => ({
  en: typeof en === 'string' ? [en] : en,
  de: [de],
  fr: [fr],
  es: [es],
  nl: [nl],
  ...(it === null ? {} : { it: [it] }),
})

/*
 * pretix: headers written through gettext inside language(event.settings.locale) (base/services/export.py).
 * The strings are the msgstr of src/pretix/locale/{de,fr,es,nl,it}/LC_MESSAGES/django.po at pretix commit
 * bb0a6a80 (POT-Creation-Date 2026-01-26). Italian has no translation of "Checked in" and "Secret" (English
 * written). "E-mail" is the msgid before pretix PR #4636 (late 2024); "Email" since.
 */
const PRETIX_COMMON: HeaderTable = {
  'Order code': t('Order code', 'Bestellnummer', 'Code de commande', 'Código del pedido', 'Bestelcode', 'Codice ordine'),
  'Attendee name': t('Attendee name', 'Name Teilnehmer*in', 'Nom du participant', 'Nombre del asistente', 'Naam van deelnemer', 'Nome del partecipante'),
  Product: t('Product', 'Produkt', 'Produit', 'Producto', 'Product', 'Prodotto'),
  Variation: t('Variation', 'Variante', 'Variante', 'Variacion', 'Variant', 'Variante'),
  Email: t(['Email', 'E-mail'], 'E-Mail', 'E-Mail', 'Correo electrónico', 'E-mail', 'Email'),
  'Requires special attention': t(
    'Requires special attention',
    'Benötigt besondere Behandlung',
    'Nécessite une attention particulière',
    'Requiere una atención especial',
    'Vereist speciale aandacht',
    'Richiede particolare attenzione',
  ),
  Blocked: t('Blocked', 'Gesperrt', 'Bloqué', 'Bloqueado', 'Geblokkeerd', 'Bloccato'),
}

/**
 * pretix check-in list CSV (plugins/checkinlists/exporters.py CSVCheckinList). The name parts are
 * `_('Attendee name: {part}')` with the scheme's translated field label (the "given_family" scheme here).
 */
export const PRETIX_CHECKIN_HEADERS: HeaderTable = {
  ...PRETIX_COMMON,
  'Attendee name: Given name': t(
    'Attendee name: Given name',
    'Teilnehmer*innenname: Vorname',
    'Nom du participant : Prénom',
    'Nombre del asistente: Nombre',
    'Naam deelnemer: Voornaam',
    'Nome del partecipante: Nome',
  ),
  'Attendee name: Family name': t(
    'Attendee name: Family name',
    'Teilnehmer*innenname: Nachname',
    'Nom du participant : Nom de famille',
    'Nombre del asistente: Apellido',
    'Naam deelnemer: Achternaam',
    'Nome del partecipante: Cognome',
  ),
  'Checked in': t('Checked in', 'Eingecheckt', 'Enregistré', 'Chequeado', 'Ingecheckt', null),
  Paid: t('Paid', 'bezahlt', 'Payé', 'Pagado', 'Betaald', 'Pagato'),
  Secret: t('Secret', 'Secret', 'Secret', 'Secreto', 'Geheim', null),
  Comment: t('Comment', 'Kommentar', 'Commentaire', 'Comentario', 'Opmerking', 'Commento'),
}

/**
 * pretix "Order data", sheet "Order positions" (base/exporters/orderlist.py). The name parts are
 * `_('Attendee name') + ': ' + label`, not the check-in list's msgid: they differ outside English. In
 * Dutch "Position ID" and "Product ID" are both "Product-ID": a header answers its first column, which
 * is the position's (it comes first).
 */
export const PRETIX_POSITIONS_HEADERS: HeaderTable = {
  ...PRETIX_COMMON,
  'Attendee name: Given name': t(
    'Attendee name: Given name',
    'Name Teilnehmer*in: Vorname',
    'Nom du participant: Prénom',
    'Nombre del asistente: Nombre',
    'Naam van deelnemer: Voornaam',
    'Nome del partecipante: Nome',
  ),
  'Attendee name: Family name': t(
    'Attendee name: Family name',
    'Name Teilnehmer*in: Nachname',
    'Nom du participant: Nom de famille',
    'Nombre del asistente: Apellido',
    'Naam van deelnemer: Achternaam',
    'Nome del partecipante: Cognome',
  ),
  'Event slug': t('Event slug', 'Kurzname der Veranstaltung', "Titre de l'événement", 'Slug del evento', 'Evenement-slug (verkorte vorm)', "Slug dell'evento"),
  'Position ID': t('Position ID', 'Position', 'ID de la position', 'ID de posición', 'Product-ID', 'ID posizione'),
  Status: t('Status', 'Status', 'Statut', 'Estado', 'Status', 'Stato'),
  'Attendee email': t(
    'Attendee email',
    'E-Mail Teilnehmer*in',
    'E-mail du participant',
    'Correo electrónico del participante',
    'E-mailadres van deelnemer',
    'Email partecipante',
  ),
  'Ticket secret': t('Ticket secret', 'Ticket-Code', 'Secret du billet', 'Secreto de la entrada', 'Ticketgeheim', 'Biglietto segreto'),
  'Order comment': t('Order comment', 'Bestellkommentar', 'Commentaire de commande', 'Comentario del pedido', 'Opmerking bestelling', "Commento all'ordine"),
}

/** The positions sheet's name in an xlsx of pretix's order data (orderlist.py, same catalogues). */
export const PRETIX_POSITIONS_SHEET = ['Order positions', 'Bestellzeilen', 'Position de commande', 'Posiciones del pedido', 'Bestelde producten', 'Posizioni degli ordini']

/*
 * pretix values written through the same catalogues: the positions sheet's Status (Order.STATUS_CHOICE,
 * base/models/orders.py, and _("canceled") for a cancelled position) and Yes/No.
 */
export const PRETIX_STATUS = {
  pending: ['pending', 'ausstehend', 'en attente', 'pendiente', 'openstaand', 'in attesa'],
  expired: ['expired', 'abgelaufen', 'expiré', 'expirado', 'verlopen', 'scaduto'],
  canceled: ['canceled', 'storniert', 'annulé', 'cancelado', 'geannuleerd', 'cancellato'],
} as const
export const PRETIX_YES = ['yes', 'ja', 'oui', 'si', 'sì']
export const PRETIX_NO = ['no', 'nein', 'non', 'nee']

/*
 * Hi.Events AttendeesExport (backend/app/Exports/AttendeesExport.php): headings through __() since
 * bd60daad (2025-02-27), in the exporting user's language, from backend/lang/{de,fr,es,nl,it}.json at
 * commit 944433c (2026-04-08). Before that the headings were English literals ("Ticket ID", and
 * "Ticket Name" from 35c33744, 2024-12-20). "Check Ins" has an empty translation everywhere: English.
 */
export const HIEVENTS_HEADERS: HeaderTable = {
  'First Name': t('First Name', 'Vorname', 'Prénom', 'Nombre', 'Voornaam', 'Nome'),
  'Last Name': t('Last Name', 'Nachname', 'Nom', 'Apellido', 'Achternaam', 'Cognome'),
  Email: t('Email', 'E-Mail', 'E-mail', 'Correo electrónico', 'E-mail', 'Email'),
  Status: t('Status', 'Status', 'Statut', 'Estado', 'Status', 'Status'),
  'Product Name': t('Product Name', 'Produktname', 'Nom du produit', 'Nombre del producto', 'Productnaam', 'Nome del prodotto'),
  'Public ID': t('Public ID', 'Öffentliche ID', 'ID public', 'ID público', 'Publieke ID', 'ID pubblico'),
  'Short ID': t('Short ID', 'Kurz-ID', 'ID court', 'ID corto', 'Korte ID', 'ID corto'),
  Notes: t('Notes', 'Notizen', 'Notes', 'Notas', 'Notities', 'Note'),
}

/**
 * The header's columns asked for by their English names: a name in `table` is looked up as `language`
 * writes it (falling back to English where the catalogue does); any other name (chip, wallet…) as is.
 */
export function translatedColumns(columns: Columns, table: HeaderTable, language: Language): Columns {
  if (language === 'en') return columns
  const names = (asked: string[]) => asked.flatMap((name) => table[name]?.[language] ?? table[name]?.en ?? [name])
  return {
    header: columns.header,
    find: (...asked) => columns.find(...names(asked)),
    has: (...asked) => columns.has(...names(asked)),
    count: (name) => columns.count(name),
    cell: (row, ...asked) => columns.cell(row, ...names(asked)),
  }
}

/** The language whose headers make up every group of `signature` (English names), or undefined. */
export function signatureLanguage(columns: Columns, table: HeaderTable, signature: readonly (readonly string[])[]): Language | undefined {
  return LANGUAGES.find((language) => {
    const translated = translatedColumns(columns, table, language)
    return signature.every((group) => translated.has(...group))
  })
}

/**
 * Every documented read operation of the API, as data: path parts, family, the filters it
 * takes (name -> kind), its page-size maximum, its id and time fields (dotted paths where the
 * record nests them), its date-window rule, and the documented field tree of one record.
 *
 * Written from docs/api-catalogue.md (sources and certainty there). Edit both together.
 */
import type { CatalogueEntry } from "./CatalogueEntry.ts"

export const documented: ReadonlyArray<CatalogueEntry> = [
  {
    family: "pos",
    resource: "business",
    operation: "depot",
    shape: "list",
    idField: "id",
    filters: {
      ids: "number[]"
    },
    record: {
      id: "number",
      code: "string",
      name: "string",
      mobile: "string",
      location: {
        cityId: "number",
        cityName: "string",
        districtId: "number",
        districtName: "string",
        wardId: "number",
        wardName: "string",
        address: "string"
      },
      locationV2: {
        cityId: "number",
        cityName: "string",
        wardId: "number",
        wardName: "string",
        address: "string"
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "business",
    operation: "user",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      ids: "number[]"
    },
    record: {
      id: "number",
      username: "string",
      fullName: "string",
      email: "string",
      mobile: "string",
      roleName: "string",
      depots: [{
        id: "number",
        name: "string"
      }]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "business",
    operation: "department",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      name: "string",
      code: "string",
      status: "number"
    },
    record: {
      id: "number",
      parentId: "number",
      code: "string",
      name: "string",
      status: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "business",
    operation: "supplier",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      id: "number"
    },
    record: {
      id: "number",
      name: "string",
      mobile: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "list",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    updatedAtField: "updatedAt",
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      ids: "number[]",
      name: "string",
      parentId: "number",
      gpid: "number",
      categoryIds: "number[]",
      status: "number[]",
      price: "object",
      brandIds: "number[]",
      imei: "string",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds"
    },
    sort: ["id"],
    record: {
      id: "number",
      parentId: "number",
      code: "string",
      barcode: "string",
      name: "string",
      otherName: "string",
      status: "number",
      priceVatMode: "number",
      importPriceVatMode: "number",
      categoryId: "number",
      internalCategoryId: "number",
      prices: {
        retail: "number",
        retailVat: "number",
        import: "number",
        importVat: "number",
        old: "number",
        wholesale: "number",
        avgCost: "number"
      },
      images: {
        avatar: "string",
        others: ["string"]
      },
      warranty: {
        month: "number",
        phone: "string",
        address: "string"
      },
      brandId: "number",
      type: "number",
      shipping: {
        width: "number",
        height: "number",
        length: "number",
        weight: "number"
      },
      countryName: "string",
      units: {
        name: "string",
        list: [{
          id: "number",
          name: "string",
          quantity: "number",
          price: {
            retail: "number",
            import: "number",
            wholesale: "number"
          }
        }]
      },
      combos: [{
        id: "number",
        code: "string",
        name: "string",
        quantity: "number"
      }],
      inventory: {
        remain: "number",
        shipping: "number",
        damaged: "number",
        holding: "number",
        transfering: "number",
        available: "number",
        warranty: {
          remain: "number",
          holding: "number"
        },
        depots: [{
          id: "number",
          remain: "number",
          shipping: "number",
          damaged: "number",
          holding: "number",
          transfering: "number",
          available: "number",
          warranty: {
            remain: "number",
            holding: "number"
          }
        }]
      },
      attributes: [{
        id: "number",
        name: "string",
        nameOther: "string",
        value: "string",
        code: "string",
        codeOther: "string"
      }],
      updatedAt: "number",
      createdAt: "number",
      tagIds: ["number"]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "detail",
    shape: "object",
    idField: "id",
    createdAtField: "createdAt",
    updatedAtField: "updatedAt",
    filters: {
      id: "number"
    },
    record: {
      id: "number",
      parentId: "number",
      code: "string",
      barcode: "string",
      name: "string",
      otherName: "string",
      status: "string",
      category: {
        id: "number",
        code: "string",
        name: "string"
      },
      internalCategory: {
        id: "number",
        code: "string",
        name: "string"
      },
      prices: {
        retail: "number",
        import: "number",
        old: "number",
        wholesale: "number",
        avgCost: "number"
      },
      vat: "number",
      images: {
        avatar: "string",
        others: ["string"]
      },
      warranty: {
        month: "number",
        phone: "string",
        address: "string"
      },
      brand: {
        id: "number",
        name: "string"
      },
      type: {
        id: "number",
        name: "string"
      },
      shipping: {
        length: "number",
        width: "number",
        height: "number",
        weight: "number"
      },
      countryName: "string",
      units: {
        name: "string",
        list: [{
          id: "number",
          name: "string",
          quantity: "number",
          price: {
            retail: "number",
            import: "number",
            wholesale: "number"
          }
        }]
      },
      combos: [{
        id: "number",
        code: "string",
        name: "string",
        quantity: "number"
      }],
      inventory: {
        remain: "number",
        shipping: "number",
        damaged: "number",
        holding: "number",
        transfering: "number",
        warranty: "number",
        warrantyHolding: "number",
        holdingNew: "number",
        shippingExport: "number",
        available: "number",
        depots: [{
          id: "number",
          remain: "number",
          shipping: "number",
          damaged: "number",
          holding: "number",
          transfering: "number",
          warranty: "number",
          warrantyHolding: "number",
          holdingNew: "number",
          shippingExport: "number",
          available: "number"
        }]
      },
      attributes: [{
        id: "number",
        name: "string",
        value: "string",
        order: "number",
        orderValue: "number"
      }],
      updatedAt: "number",
      createdAt: "number",
      description: "string",
      content: "string",
      suppliers: {
        id: "number",
        name: "string",
        mobile: "string"
      },
      videos: [{
        title: "string",
        src: "string"
      }],
      branchPrices: [{
        branch: {
          id: "number",
          name: "string"
        },
        price: "number",
        wholesalePrice: "number"
      }],
      childs: "unknown",
      tagIds: ["number"]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "inventory",
    shape: "list",
    pageSizeMax: 100,
    idField: "productId",
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      ids: "number[]",
      name: "string",
      depotIds: "number[]",
      categoryId: "number",
      status: "number[]",
      brandIds: "number[]",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds"
    },
    sort: ["productId"],
    record: {
      productId: "number",
      barcode: "string",
      name: "string",
      prices: {
        retail: "number",
        wholesale: "number",
        import: "number",
        avgCost: "number"
      },
      inventory: {
        remain: "number",
        shipping: "number",
        damaged: "number",
        holding: "number",
        transfering: "number",
        available: "number",
        warranty: {
          remain: "number",
          holding: "number"
        },
        depots: [{
          id: "number",
          remain: "number",
          shipping: "number",
          damaged: "number",
          holding: "number",
          transfering: "number",
          available: "number",
          warranty: {
            remain: "number",
            holding: "number"
          }
        }]
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "category",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      ids: "number[]",
      name: "string",
      code: "string",
      status: "number"
    },
    record: {
      id: "number",
      parentId: "number",
      code: "string",
      name: "string",
      order: "number",
      image: "string",
      content: "string",
      status: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "internalcategory",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      ids: "number[]",
      name: "string",
      code: "string"
    },
    record: {
      id: "number",
      parentId: "number",
      name: "string",
      code: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "brand",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      name: "string",
      code: "string",
      status: "number"
    },
    record: {
      id: "number",
      code: "string",
      name: "string",
      status: "number",
      parentId: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "unit",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      id: "number",
      productId: "number",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds"
    },
    record: {
      id: "number",
      productId: "number",
      name: "string",
      quantity: "number",
      price: "number",
      wholesalePrice: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "batch",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      id: "number",
      productId: "number",
      status: "number",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds"
    },
    record: {
      id: "number",
      productId: "number",
      name: "string",
      manufactureDate: "string",
      expiredDate: "string",
      status: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "expire",
    shape: "list",
    pageSizeMax: 100,
    filters: {
      billId: "number",
      depotId: "number",
      categoryId: "number",
      internalCategoryId: "number",
      expiredDateFrom: "date",
      expiredDateTo: "date",
      daysWarningFrom: "number",
      daysWarningTo: "number",
      status: "number"
    },
    record: {
      depot: {
        id: "number",
        name: "string"
      },
      product: {
        id: "number",
        name: "string"
      },
      billId: "number",
      quantity: "number",
      expiredDate: "string",
      priorWarningDays: "number",
      status: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "gift",
    shape: "list",
    pageSizeMax: 100,
    createdAtField: "createdAt",
    filters: {
      ids: "number[]"
    },
    record: {
      categoryId: "number",
      quantity: "number",
      value: "number",
      promotion: {
        id: "number",
        startDate: "string",
        endDate: "string",
        status: "number"
      },
      product: {
        id: "number",
        code: "string",
        name: "string"
      },
      gift: {
        id: "number",
        code: "string",
        name: "string"
      },
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "imei",
    shape: "list",
    pageSizeMax: 100,
    idField: "imei",
    createdAtField: "createdAt",
    filters: {
      productId: "number",
      imei: "string",
      depotId: "number",
      status: "number"
    },
    record: {
      shopProductId: "string",
      product: {
        id: "number",
        name: "string",
        code: "string",
        barcode: "string"
      },
      depot: {
        id: "number",
        name: "string"
      },
      imei: "string",
      price: "number",
      importPrice: "number",
      description: "string",
      status: "number",
      warranty: {
        month: "number",
        expiredDate: "string"
      },
      extendedWarranty: {
        id: "number",
        name: "string",
        month: "number"
      },
      createdAt: "number",
      activatedAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "imeihistory",
    shape: "list",
    pageSizeMax: 100,
    createdAtField: "createdAt",
    filters: {
      imei: "string"
    },
    requiredFilters: ["imei"],
    record: {
      step: {
        id: "number",
        name: "string"
      },
      itemType: "number",
      itemId: "number",
      supplier: {
        id: "number",
        name: "string"
      },
      sale: {
        id: "number",
        name: "string"
      },
      product: {
        id: "number",
        name: "string",
        code: "string",
        barcode: "string"
      },
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "imeisold",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    filters: {
      productIds: "number[]",
      fromDate: "date",
      toDate: "date",
      imei: "string",
      brandId: "number"
    },
    record: {
      id: "number",
      imei: "string",
      date: "string",
      mode: "number",
      depot: {
        id: "number",
        name: "string"
      },
      product: {
        id: "number",
        name: "string",
        code: "string",
        price: "number"
      },
      customer: {
        id: "number",
        code: "string",
        mobile: "string",
        name: "string",
        email: "string",
        address: "string"
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "tags",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      name: "string"
    },
    record: {
      id: "number",
      businessId: "number",
      name: "string",
      status: "number",
      bgColor: "string",
      textColor: "string",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "supplierproduct",
    shape: "list",
    pageSizeMax: 100,
    createdAtField: "createdAt",
    filters: {
      productIds: "number[]",
      supplierIds: "number[]",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds"
    },
    sort: ["id"],
    record: {
      productId: "number",
      supplierId: "number",
      supplierProductCode: "string",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "product",
    operation: "combo",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      productParentIds: "number[]",
      name: "string",
      categoryIds: "number[]",
      status: "number[]",
      price: "object",
      brandIds: "number[]",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds"
    },
    sort: ["productParentId"],
    record: {
      id: "number",
      comboName: "string",
      comboCode: "string",
      avgCost: "number",
      comboItems: [{
        id: "number",
        code: "string",
        name: "string",
        avgCost: "number",
        price: "number",
        qty: "number"
      }]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "order",
    operation: "list",
    shape: "list",
    pageSizeMax: 100,
    idField: "info.id",
    createdAtField: "info.createdAt",
    updatedAtField: "info.updatedAt",
    window: {
      from: "createdAtFrom",
      to: "createdAtTo",
      format: "unix",
      maxDays: 31
    },
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds",
      deliveryAtFrom: "unixSeconds",
      deliveryAtTo: "unixSeconds",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds",
      ids: "number[]",
      statuses: "number[]",
      saleChannels: "number[]",
      depotIds: "number[]",
      type: "number",
      handoverId: "number",
      carrier: "object",
      shippingAddress: "object"
    },
    record: {
      info: {
        id: "number",
        depotId: "number",
        pickupDepotId: "number",
        type: "number",
        mode: "number",
        exportType: "number",
        originalOrderId: "number",
        returnFromId: "number",
        idReturn: "number",
        createdById: "number",
        createdByName: "string",
        saleId: "number",
        saleName: "string",
        packedById: "number",
        packedByName: "string",
        customerCareId: "number",
        customerCareName: "string",
        createdAt: "number",
        updatedAt: "number",
        confirmedAt: "number",
        packedAt: "number",
        description: "string",
        privateDescription: "string",
        orderIndex: "number",
        status: "number",
        reason: "number",
        handoverIds: ["number"],
        trackingUrl: "string",
        tags: [{
          id: "string",
          name: "string",
          textColor: "string",
          bgColor: "string",
          status: "number"
        }]
      },
      channel: {
        appOrderId: "string",
        saleChannel: "number",
        trafficSource: "string",
        pageId: "string",
        conversationId: "string",
        fbAdsId: "number",
        fbPsid: "number",
        domain: "string",
        shopId: "number",
        shopName: "string",
        affiliate: {
          code: "string",
          value: "number",
          bonus: "number",
          bonusRate: "number"
        },
        marketting: {
          utmSource: "string",
          utmMedium: "string",
          utmCampaign: "string"
        }
      },
      shippingAddress: {
        id: "number",
        code: "string",
        name: "string",
        mobile: "string",
        email: "string",
        address: "string",
        birthday: "string",
        cityId: "number",
        districtId: "number",
        wardId: "number",
        companyName: "string",
        companyAddress: "string",
        taxCode: "string"
      },
      products: [{
        productId: "number",
        orderProductId: "number",
        typeId: "number",
        code: "string",
        name: "string",
        appProductId: "string",
        weight: "number",
        quantity: "number",
        price: "number",
        originalPrice: "number",
        priceVatMode: "number",
        priceAfterVAT: "number",
        discount: "number",
        discountAmount: "number",
        avgCost: "number",
        vatPercent: "number",
        description: "string",
        imeiId: "number",
        imei: "string",
        imeiIds: ["number"],
        imeiCodes: [{
          id: "number",
          code: "string"
        }],
        priceListName: "string",
        transactionFee: "number",
        paymentStatus: "number",
        partialReturnStatus: "number",
        usedPoints: "number",
        usedPointAmount: "number",
        batch: {
          id: "number",
          name: "string",
          manufactureDate: "string",
          expiredDate: "string"
        },
        unit: {
          id: "number",
          name: "string",
          quantity: "number",
          price: "number",
          priceAfterVAT: "number"
        },
        partialDelivery: {
          deliveredQuantity: "number",
          deliveredUnitQuantity: "number",
          returnQuantity: "number",
          returnUnitQuantity: "number",
          lostQuantity: "number",
          lostUnitQuantity: "number"
        },
        combos: [{
          id: "number",
          code: "string",
          name: "string",
          quantity: "number"
        }],
        totalAmount: "number"
      }],
      carrier: {
        id: "number",
        name: "string",
        service: {
          id: "number",
          code: "string",
          name: "string",
          type: "number",
          typeName: "string"
        },
        carrierCode: "string",
        fullCarrierCode: "string",
        carrierSortCode: "string",
        packageCode: "string",
        checkGoods: "string",
        sendCarrierType: "number",
        sendCarrierAt: "number",
        deliveryAt: "number",
        isPartDelivery: "number",
        isDeclaredFee: "number",
        declaredValue: "number",
        declaredFee: "number",
        carrierPromotionCode: "string",
        weight: "number",
        shipFee: "number",
        codFee: "number",
        overWeightShipFee: "number",
        returnFee: "number",
        customerShipFee: "number",
        ecomFee: "number",
        carrierPaymentStatus: "number"
      },
      payment: {
        usedPoints: {
          points: "number",
          amount: "number"
        },
        vat: {
          percent: "number",
          amount: "number",
          taxCode: "string",
          taxDate: "string"
        },
        discount: {
          percent: "number",
          amount: "number"
        },
        couponCode: "string",
        debtDueDate: "string",
        deposit: {
          amount: "number",
          accountId: "number",
          name: "string"
        },
        transfer: {
          amount: "number",
          accountId: "number",
          name: "string"
        },
        credit: {
          amount: "number",
          accountId: "number",
          code: "string",
          name: "string"
        },
        codAmount: "number",
        businessPayment: "number",
        businessPaymentStatus: "number"
      },
      gifts: [{
        productId: "number",
        orderProductId: "number",
        name: "string",
        quantity: "number",
        price: "string"
      }]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "order",
    operation: "history",
    shape: "list",
    pageSizeMax: 100,
    idField: "logId",
    createdAtField: "createdAt",
    filters: {
      orderIds: "number[]",
      type: "string",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds",
      steps: "number[]"
    },
    requiredFilters: ["orderIds"],
    record: {
      logId: "string",
      orderId: "number",
      step: "number",
      status: {
        old: "number",
        new: "number"
      },
      createdAt: "number",
      createdById: "number",
      createdBy: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "order",
    operation: "source",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]"
    },
    record: {
      id: "number",
      name: "string",
      status: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "order",
    operation: "deleted",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds"
    },
    // The deletion time: a feed read incrementally (docs/api-catalogue.md, "Deletion feeds").
    incremental: { from: "createdAtFrom", to: "createdAtTo", format: "unix" },
    record: {
      id: "number",
      createdAt: "number",
      createdById: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "order",
    operation: "tags",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      name: "string"
    },
    record: {
      id: "number",
      businessId: "number",
      name: "string",
      status: "number",
      bgColor: "string",
      textColor: "string",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "shipping",
    operation: "location",
    shape: "list",
    idField: "id",
    filters: {
      locationVersion: "string",
      type: "string",
      parentId: "number"
    },
    requiredFilters: ["locationVersion", "type"],
    record: {
      id: "number",
      name: "string",
      otherName: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "shipping",
    operation: "carrier",
    shape: "list",
    idField: "id",
    filters: {},
    record: {
      id: "number",
      name: "string",
      logo: "string",
      status: "number",
      shortName: "string",
      services: [{
        id: "number",
        name: "string",
        description: "string"
      }]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "shipping",
    operation: "fee",
    shape: "list",
    filters: {
      type: "number",
      depotId: "number",
      shippingWeight: "number",
      price: "number",
      totalCod: "number",
      carrier: "object",
      shippingFrom: "object",
      shippingTo: "object"
    },
    requiredFilters: ["type", "shippingWeight", "shippingFrom", "shippingTo"],
    record: {
      logo: "string",
      carrier: {
        id: "number",
        accountId: "number",
        accountName: "string",
        shopId: "string"
      },
      service: {
        id: "number",
        name: "string",
        code: "string",
        description: "string"
      },
      shipFee: "number",
      codFee: "number",
      declaredFee: "number",
      customerShipFee: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "list",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "created.createdAt",
    window: {
      from: "fromDate",
      to: "toDate",
      format: "date",
      maxDays: 31
    },
    filters: {
      ids: "number[]",
      type: "number",
      modes: "number[]",
      depotIds: "number[]",
      orderIds: "number[]",
      customerId: "number",
      customerMobile: "string",
      fromDate: "date",
      toDate: "date"
    },
    record: {
      id: "number",
      orderId: "number",
      requirementBillId: "number",
      inventoryCheckId: "number",
      warrantyBillId: "number",
      depotId: "number",
      date: "string",
      type: "number",
      mode: "number",
      related: {
        type: "number",
        parentId: "number",
        billId: "number",
        businessId: "number",
        depotId: "number",
        requirementBillId: "number",
        userId: "number",
        userName: "string"
      },
      customer: {
        id: "number",
        name: "string",
        mobile: "string",
        address: "string"
      },
      created: {
        id: "number",
        name: "string",
        createdAt: "number"
      },
      sale: {
        id: "number",
        name: "string",
        saleBonus: "number"
      },
      technicalStaff: {
        id: "number",
        name: "string"
      },
      supplier: {
        id: "number",
        name: "string"
      },
      products: [{
        imexId: "number",
        id: "number",
        code: "string",
        barcode: "string",
        name: "string",
        imeiId: "number",
        imei: "unknown",
        quantity: "number",
        price: "number",
        discount: "number",
        extendedWarrantyAmount: "number",
        vat: {
          percent: "number",
          amount: "number"
        },
        amount: "number",
        giftProducts: "unknown"
      }],
      payment: {
        amount: "number",
        customerAmount: "number",
        discount: "number",
        points: "number",
        usedPoints: {
          points: "number",
          amount: "number"
        },
        transfer: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        cash: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        installment: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        credit: {
          accountId: "number",
          name: "string",
          code: "string",
          amount: "number"
        },
        coupon: {
          code: "string",
          value: "number",
          amount: "number"
        },
        returnFee: "number",
        returnAmount: "number"
      },
      description: "string",
      customerSource: {
        id: "number",
        name: "string"
      },
      tags: "unknown"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "retail",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    window: {
      from: "fromDate",
      to: "toDate",
      format: "date",
      maxDays: 31
    },
    filters: {
      id: "number",
      depotIds: "number[]",
      type: "number",
      orderIds: "number[]",
      customerId: "number",
      customerMobile: "string",
      fromDate: "date",
      toDate: "date"
    },
    record: {
      id: "number",
      orderId: "number",
      requirementBillId: "number",
      inventoryCheckId: "number",
      warrantyBillId: "number",
      depotId: "number",
      date: "string",
      type: "number",
      related: {
        type: "number",
        parentId: "number",
        billId: "number",
        businessId: "number",
        depotId: "number",
        requirementBillId: "number",
        userId: "number",
        userName: "string"
      },
      customer: {
        id: "number",
        name: "string",
        mobile: "string",
        address: "string"
      },
      sale: {
        id: "number",
        name: "string",
        saleBonus: "number"
      },
      technicalStaff: {
        id: "number",
        name: "string"
      },
      products: [{
        imexId: "number",
        id: "number",
        code: "string",
        name: "string",
        imeiId: "number",
        imei: "unknown",
        quantity: "number",
        priceVatMode: "number",
        price: "number",
        discount: "number",
        extendedWarrantyAmount: "number",
        vat: {
          percent: "number",
          amount: "number"
        },
        amount: "number",
        giftProducts: "unknown"
      }],
      payment: {
        amount: "number",
        customerAmount: "number",
        discount: "number",
        points: "number",
        usedPoints: {
          points: "number",
          amount: "number"
        },
        transfer: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        cash: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        installment: {
          accountId: "number",
          name: "string",
          amount: "number"
        },
        credit: {
          accountId: "number",
          name: "string",
          code: "string",
          amount: "number"
        },
        coupon: {
          code: "string",
          value: "number",
          amount: "number"
        },
        returnFee: "number",
        returnAmount: "number"
      },
      description: "string",
      customerSource: {
        id: "number",
        name: "string"
      },
      tags: "unknown",
      supplierId: "number",
      createdById: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "deleted",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds"
    },
    // The deletion time: a feed read incrementally (docs/api-catalogue.md, "Deletion feeds").
    incremental: { from: "createdAtFrom", to: "createdAtTo", format: "unix" },
    record: {
      id: "number",
      createdAt: "number",
      createdById: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "imexs",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      id: "number",
      fromDate: "date",
      toDate: "date",
      billId: "number",
      type: "number",
      mode: "number",
      depotId: "number",
      relatedDepotId: "number",
      warrantyBillId: "number",
      orderId: "number",
      orderIds: "number[]",
      supplierId: "number",
      product: "object"
    },
    record: {
      id: "number",
      billId: "number",
      type: "number",
      mode: "number",
      date: "string",
      reference: {
        orderId: "number",
        requirementBillId: "number",
        inventoryCheckId: "number",
        warrantyBillId: "number"
      },
      depot: {
        id: "number",
        name: "string"
      },
      relatedDepot: {
        id: "number",
        name: "string"
      },
      supplier: {
        id: "number",
        name: "string",
        mobile: "string"
      },
      product: {
        id: "number",
        code: "string",
        barcode: "string",
        name: "string",
        prices: {
          retail: "number",
          import: "number",
          avgCost: "number"
        }
      },
      imei: {
        id: "number",
        code: "string"
      },
      batch: {
        id: "number",
        name: "string",
        manufactureDate: "string",
        expiredDate: "string"
      },
      avgCost: "number",
      productPrice: "number",
      quantity: "number",
      vat: "number",
      vatPercent: "number",
      discount: "number",
      description: "string",
      points: "number",
      usedPoints: "number",
      usedPointAmount: "number",
      createdAt: "number",
      saleBonus: "number",
      extendedWarranty: {
        id: "number",
        amount: "number",
        month: "number"
      },
      warrantyReasonId: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "draftlist",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "created.createdAt",
    updatedAtField: "lastUpdatedAt",
    window: {
      from: "lastUpdatedAtFrom",
      to: "lastUpdatedAtTo",
      format: "unix",
      maxDays: 31
    },
    filters: {
      ids: "number[]",
      types: "number[]",
      modes: "number[]",
      depotIds: "number[]",
      statuses: "number[]",
      lastUpdatedAtFrom: "unixSeconds",
      lastUpdatedAtTo: "unixSeconds"
    },
    record: {
      id: "number",
      type: "number",
      mode: "number",
      fromDepotId: "number",
      toDepotId: "number",
      status: "number",
      lastUpdatedAt: "number",
      created: {
        userId: "number",
        createdAt: "number"
      },
      approved: {
        userId: "number",
        approvedAt: "number"
      },
      confirmed: {
        userId: "number",
        approvedAt: "number"
      },
      payment: {
        discount: "number"
      },
      description: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "bill",
    operation: "draftproducts",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      billIds: "number[]",
      types: "number[]",
      modes: "number[]",
      depotIds: "number[]",
      statuses: "number[]",
      lastUpdatedAtFrom: "unixSeconds",
      lastUpdatedAtTo: "unixSeconds"
    },
    record: {
      id: "number",
      billId: "number",
      type: "number",
      mode: "number",
      status: "number",
      damagedQuantity: "number",
      discount: "number",
      fromDepot: {
        id: "number",
        name: "string"
      },
      toDepot: {
        id: "number",
        name: "string"
      },
      supplier: {
        id: "number",
        name: "string",
        mobile: "string"
      },
      product: {
        id: "number",
        code: "string",
        barcode: "string",
        name: "string",
        prices: {
          retail: "number",
          import: "number",
          avgCost: "number"
        },
        batchId: "number",
        imeiId: "number",
        imei: "string"
      },
      required: {
        quantity: "number",
        price: "number",
        description: "string",
        userId: "number",
        userName: "string",
        datetime: "string"
      },
      approved: {
        quantity: "number",
        price: "number",
        description: "string",
        userId: "number",
        userName: "string",
        approvedAt: "number"
      },
      confirmed: {
        quantity: "number",
        confirmedAt: "number"
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "inventory",
    operation: "archive",
    shape: "list",
    pageSizeMax: 50,
    createdAtField: "createdAt",
    updatedAtField: "updatedAt",
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      productIds: "number[]",
      depotIds: "number[]",
      categoryId: "number",
      brandId: "number[]",
      createdAtFrom: "unixSeconds",
      createdAtTo: "unixSeconds",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds"
    },
    sort: ["id"],
    record: {
      depot: {
        id: "number",
        name: "string"
      },
      product: {
        id: "number",
        barcode: "string",
        code: "string",
        name: "string",
        remain: "number"
      },
      minRemain: "number",
      maxRemain: "number",
      waiting: "number",
      available: "number",
      createdBy: {
        id: "number",
        name: "string"
      },
      createdAt: "number",
      updatedAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "customer",
    operation: "list",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    updatedAtField: "updatedAt",
    incremental: {
      from: "updatedAtFrom",
      to: "updatedAtTo",
      format: "unix"
    },
    filters: {
      ids: "number[]",
      mobile: "string",
      lastBoughtDateFrom: "date",
      lastBoughtDateTo: "date",
      updatedAtFrom: "unixSeconds",
      updatedAtTo: "unixSeconds",
      type: "number"
    },
    record: {
      id: "number",
      type: "number",
      name: "string",
      mobile: "string",
      code: "string",
      gender: "number",
      address: "string",
      email: "string",
      birthday: "string",
      points: "number",
      saleName: "string",
      startedDate: "string",
      taxCode: "string",
      locations: {
        cityId: "number",
        districtId: "number",
        wardId: "number"
      },
      location: {
        cityId: "number",
        wardId: "number"
      },
      business: {
        name: "string",
        address: "string"
      },
      level: {
        id: "number",
        name: "string"
      },
      group: {
        id: "number",
        name: "string"
      },
      totalAmount: "number",
      updatedAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "customer",
    operation: "tags",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "number[]",
      name: "string"
    },
    record: {
      id: "number",
      businessId: "number",
      name: "string",
      status: "number",
      bgColor: "string",
      textColor: "string",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "promotion",
    operation: "batch",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      id: "number",
      couponCode: "string",
      productId: "number",
      depotId: "number",
      name: "string"
    },
    record: {
      id: "number",
      name: "string",
      description: "string",
      startDate: "string",
      endDate: "string",
      status: "number",
      numberOfCodes: "number",
      codeLength: "number",
      prefix: "string",
      suffix: "string",
      valueType: "number",
      value: "number",
      valueMax: "number",
      fromValue: "number",
      depotIds: ["number"],
      toValue: "number",
      notApplyWithDiscountPromotion: "boolean",
      isCategoryApplyOnce: "number",
      createdBy: {
        id: "number",
        name: "string"
      },
      totalUsedTime: "number",
      totalAssign: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "promotion",
    operation: "couponcode",
    shape: "list",
    pageSizeMax: 100,
    idField: "code",
    createdAtField: "createdAt",
    filters: {
      batchId: "number",
      code: "string"
    },
    requiredFilters: ["batchId"],
    record: {
      depotId: "number",
      code: "string",
      value: "number",
      valueMax: "number",
      valueType: "number",
      status: "number",
      usedAt: "number",
      totalCanUsed: "number",
      totalAssigned: "number",
      totalUsed: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "promotion",
    operation: "couponproduct",
    shape: "list",
    pageSizeMax: 100,
    filters: {
      batchId: "number"
    },
    requiredFilters: ["batchId"],
    record: {
      batchId: "number",
      product: {
        id: "number",
        name: "string"
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "promotion",
    operation: "pricelist",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdDateTime",
    filters: {
      ids: "number[]",
      name: "string",
      status: "number",
      depotIds: "number[]"
    },
    sort: ["id"],
    record: {
      id: "number",
      businessId: "number",
      name: "string",
      status: "number",
      startDate: "string",
      endDate: "string",
      createdBy: {
        id: "number",
        name: "string"
      },
      createdDateTime: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "promotion",
    operation: "pricelistproduct",
    shape: "list",
    pageSizeMax: 100,
    idField: "product.id",
    filters: {
      productIds: "number[]",
      priceListIds: "number[]"
    },
    requiredFilters: ["priceListIds"],
    sort: ["id"],
    record: {
      product: {
        id: "number",
        name: "string",
        code: "string",
        barcode: "string",
        price: "number",
        remain: "number",
        importPrice: "number",
        category: {
          id: "number",
          name: "string"
        }
      },
      priceList: [{
        id: "number",
        businessId: "number",
        name: "string",
        value: "number"
      }]
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "accounting",
    operation: "transaction",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "created.createdAt",
    filters: {
      id: "number",
      fromDate: "date",
      toDate: "date",
      typeDate: "number",
      type: "number",
      mode: "number",
      filterMode: "number",
      contactType: "number"
    },
    sort: ["id"],
    record: {
      id: "number",
      date: "string",
      type: "number",
      mode: "number",
      amount: "number",
      itemType: "number",
      itemId: "number",
      documentCode: "string",
      description: "string",
      items: [{
        amount: "number",
        itemType: "number",
        itemId: "number",
        description: "string",
        credit: {
          id: "number",
          name: "string",
          code: "string"
        },
        debit: {
          id: "number",
          name: "string",
          code: "string"
        }
      }],
      depot: {
        id: "number",
        name: "string"
      },
      contact: {
        id: "number",
        name: "string",
        code: "string"
      },
      created: {
        id: "number",
        name: "string",
        createdAt: "number"
      }
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "accounting",
    operation: "debts",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    filters: {
      id: "number",
      fromDate: "string",
      toDate: "string",
      code: "string",
      name: "string",
      address: "string",
      mobile: "string",
      itemSubType: "number",
      debtType: "number",
      lastRemain: "string"
    },
    record: {
      id: "number",
      code: "string",
      name: "string",
      mobile: "string",
      address: "string",
      firstDebit: "number",
      firstCredit: "number",
      debit: "number",
      credit: "number",
      receive: "number",
      pay: "number",
      debtLimit: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "accounting",
    operation: "account",
    shape: "list",
    pageSizeMax: 100,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      id: "number",
      types: "number[]",
      status: "number[]"
    },
    record: {
      id: "number",
      parentId: "number",
      type: "number",
      code: "string",
      name: "string",
      status: "number",
      label: "string",
      level: "number",
      depotId: "number",
      createdById: "number",
      createdAt: "string"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "ecom",
    operation: "shop",
    shape: "list",
    pageSizeMax: 100,
    idField: "shop.id",
    createdAtField: "createdAt",
    filters: {
      appIds: "number[]"
    },
    record: {
      appId: "number",
      shop: {
        id: "string",
        name: "string"
      },
      expriredAt: "number",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "ecom",
    operation: "return",
    shape: "list",
    pageSizeMax: 100,
    idField: "returnId",
    createdAtField: "createdAt",
    updatedAtField: "updateAt",
    filters: {
      appId: "number",
      shopIds: "string[]",
      returnIdOrReturnTrackingNumber: "string",
      originalEcomOrderId: "string",
      createdFromAt: "unixSeconds",
      createdToAt: "unixSeconds",
      updatedFromAt: "unixSeconds",
      updatedToAt: "unixSeconds",
      nhanhStatuses: "number[]"
    },
    requiredFilters: ["appId"],
    record: {
      shopId: "string",
      returnId: "string",
      businessId: "number",
      returnType: "number",
      originalEcomOrderId: "string",
      reasonInfor: {
        reasonId: "string",
        reasonName: "string"
      },
      productsInfor: [{
        image: "string",
        name: "string",
        quantity: "number",
        price: "number",
        sku: "string"
      }],
      amount: "number",
      ecomStatus: {
        id: "string",
        name: "string"
      },
      nhanhStatus: {
        id: "number",
        name: "string"
      },
      createdAt: "number",
      updateAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "pos",
    resource: "app",
    operation: "checkaccesstoken",
    shape: "object",
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "page",
    operation: "list",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      ids: "string[]",
      channels: "number[]"
    },
    sort: ["createdAt", "name"],
    record: {
      id: "string",
      name: "string",
      channel: "number",
      createdAt: "number",
      expiredAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "user",
    operation: "list",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      userIds: "string[]"
    },
    sort: ["createdAt"],
    record: {
      id: "string",
      displayName: "string",
      posUid: "string",
      posName: "string",
      createdAt: "number"
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "conversation",
    operation: "list",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdAt",
    updatedAtField: "updatedAt",
    filters: {
      pageIds: "string[]",
      type: "number",
      hasPhone: "boolean",
      hasReply: "boolean",
      status: "number",
      tagIds: "string[]",
      postIds: "string[]"
    },
    sort: ["updatedTime"],
    record: {
      id: "string",
      channel: "number",
      type: "number",
      customerAvatar: "string",
      pageId: "string",
      pageUserId: "string",
      pageUserName: "string",
      hasReply: "boolean",
      assignedGroupId: "string",
      hasPhone: "boolean",
      createdAt: "number",
      updatedAt: "number",
      lastSeenMessageAt: "number",
      lastMessage: "string",
      status: "number",
      isFromLive: "number",
      pagePostId: "string"
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "conversation",
    operation: "messages",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdAt",
    filters: {
      conversationId: "string"
    },
    sort: ["createdAt"],
    record: {
      id: "string",
      conversationId: "string",
      pageId: "string",
      senderId: "string",
      senderName: "string",
      createdById: "string",
      createdByName: "string",
      createdAt: "number",
      message: "string",
      pageUserId: "string"
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "conversation",
    operation: "tags",
    shape: "list",
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdAt",
    filters: {},
    record: {
      id: "string",
      name: "string",
      status: "number",
      color: "string",
      backgroundColor: "string",
      order: "number",
      createdAt: "number",
      shortcut: "string"
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "customer",
    operation: "list",
    shape: "list",
    // The page service's shared rule (docs/api-catalogue.md §9): at most 50 a page.
    pageSizeMax: 50,
    idField: "id",
    createdAtField: "createdTime",
    filters: {
      pageId: "string",
      pageUserIds: "string[]"
    },
    record: {
      id: "string",
      fanpageId: "string",
      fanpageUserId: "string",
      name: "string",
      createdTime: "number",
      phones: ["string"],
      emails: ["string"]
    },
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "marketing",
    operation: "adaccountlist",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "marketing",
    operation: "fmmcampaignlist",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "marketing",
    operation: "topiclist",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "marketing",
    operation: "customaudiencelist",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "report",
    operation: "capi",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  },
  {
    family: "vpage",
    resource: "report",
    operation: "capievent",
    shape: "list",
    pageSizeMax: 50,
    filters: {},
    record: {},
    certainty: "documented"
  }
]
